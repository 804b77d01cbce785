extends Node2D

var health = 100
