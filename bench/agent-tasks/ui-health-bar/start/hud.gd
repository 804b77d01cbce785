extends Control
