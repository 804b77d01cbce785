//! The planes the server acts through. Only the project plane (files under `res://`)
//! exists today; the process and editor planes come with their issues.

pub mod process;
pub mod project;
pub mod project_settings;
pub mod variant;
