//! The executors: one decoded `Command` → one JSON result or a `BridgeError`. Main
//! thread only (called from the plugin's `process()`, whose `plugin::execute` is the one
//! dispatch to them). Every create, rename, move, duplicate, delete and set goes through
//! `EditorUndoRedoManager`; a batch is one action unless it touches more than 20 nodes
//! (then it bypasses the history and says so).
//! Validation happens before the first change, so an error reply says `effect: unchanged`
//! ([`err`], [`failed`]); the few errors that come after a change say what they left:
//! `rolled_back` when its undo action ran and the value read back is the old one
//! (`resource.set_property` whose save failed), `changed` when not, and nothing at all
//! when the editor's state is unknown (a scene that did not open or close as asked).
//!
//! One file per domain, each with its own `run` for its commands; the helpers they share
//! are [`ctx`], which imports no domain. `steps.rs` runs `scene.steps` over the plan of
//! [`plan`], with the tile-map and physics steps in `tilemap.rs` and `physics.rs`.

pub(crate) mod animation;
pub(crate) mod animation_tree;
pub(crate) mod audio;
pub(crate) mod batch;
mod ctx;
pub(crate) mod editor;
pub(crate) mod files;
pub(crate) mod history;
pub(crate) mod node;
mod physics;
mod plan;
pub(crate) mod resource;
pub(crate) mod scene;
pub(crate) mod script;
pub(crate) mod shader;
pub(crate) mod signal;
pub(crate) mod steps;
pub(crate) mod tilemap;
pub(crate) mod ui;

pub(crate) use ctx::Res;
