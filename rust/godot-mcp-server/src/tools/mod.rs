//! The tools, one folder per Godot domain (scene, script, resource, animation, …), each
//! holding that domain's reads and edits together; cross-cutting rooms beside them
//! (`editor`: generic live-editor tools, `project`, `recipes`, `batch`, `transactions`,
//! `toolsets`). [`registry`] is the table every tool is registered in: its name,
//! schema, safety class, toolset and handler.

pub mod analysis;
pub mod animation;
pub mod audio;
pub mod batch;
pub mod classref;
pub mod common;
pub mod debugger;
pub mod editor;
pub mod export;
pub mod files;
pub mod input;
pub mod navigation;
pub mod particles;
pub mod physics;
pub mod profiler;
pub mod project;
pub mod recipes;
pub mod registry;
pub mod resource;
pub mod runtime;
pub mod scene;
pub mod script;
pub mod settings;
pub mod shader;
pub mod spatial;
pub mod tests;
pub mod tilemap;
pub mod toolsets;
pub mod transactions;
pub mod ui;
pub mod visual_shader;

pub use registry::*;
