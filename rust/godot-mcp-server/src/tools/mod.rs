//! The tools, one folder per Godot domain (scene, script, resource, animation, …), each
//! holding that domain's reads and edits together; cross-cutting rooms beside them
//! (`editor`: generic live-editor tools, `project`, `recipes`, `batch`, `transactions`,
//! `toolsets`). No domain imports another: what several share is the kit below them,
//! [`kit`] (editor edits, file writes, scene documents, steps, the class table, Godot
//! and .NET as child processes), which imports no domain (`scripts/domain_imports.py`).
//! [`registry`] is the table every tool is registered in: its name, schema, safety
//! class, toolset and handler.

pub mod analysis;
pub mod animation;
pub mod audio;
pub mod batch;
pub mod change;
pub mod classref;
pub mod csharp;
pub mod debugger;
pub mod editor;
pub mod export;
pub mod files;
pub mod input;
pub mod kit;
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

impl Registry {
    /// Every built-in tool.
    pub fn builtin() -> Self {
        let mut r = Self::default();
        let catalog = toolsets::Catalog::default();
        // One Vec per family, moved in whole: a chain of ~45 iterators copied each
        // definition through every level (5,900 memcpy calls at a start, callgrind).
        for defs in [
            project::read::tools(),
            scene::read::tools(),
            editor::tools(),
            transactions::tools(),
            runtime::tools(),
            runtime::helper_tools(),
            runtime::screenshots::tools(),
            files::write::tools(),
            settings::tools(),
            batch::tools(),
            change::tools(),
            toolsets::tools(catalog.clone()),
            analysis::tools(),
            scene::nodes::tools(),
            animation::read::tools(),
            audio::read::tools(),
            audio::edit::tools(),
            shader::tools(),
            scene::composite::tools(),
            project::scaffold::tools(),
            ui::read::tools(),
            tilemap::read::tools(),
            input::map::tools(),
            classref::tools(),
            script::tools(),
            csharp::tools(),
            tests::tools(),
            export::tools(),
            recipes::tools(),
            physics::tools(),
            navigation::tools(),
            particles::tools(),
            spatial::tools(),
            tilemap::edit::tools(),
            scene::edit::tools(),
            animation::edit::tools(),
            ui::edit::tools(),
            debugger::tools(),
            runtime::game::tools(),
            input::play::tools(),
            profiler::monitors::tools(),
            profiler::functions::tools(),
            files::import::tools(),
            settings::layers::tools(),
            resource::material::tools(),
            resource::properties::tools(),
            files::organize::tools(),
            visual_shader::tools(),
        ] {
            r.extend(defs);
        }
        r.finish();
        let _ = catalog.set(r.iter().map(|d| d.meta).collect());
        r
    }
}

/// The built-in registry, built once for the tests that need one.
#[cfg(test)]
pub(crate) fn builtin_for_tests() -> std::sync::Arc<Registry> {
    static REGISTRY: std::sync::OnceLock<std::sync::Arc<Registry>> = std::sync::OnceLock::new();
    REGISTRY
        .get_or_init(|| std::sync::Arc::new(Registry::builtin()))
        .clone()
}
