//! The tools, one folder per Godot domain (scene, script, resource, animation, …), each
//! holding that domain's reads and edits together; cross-cutting rooms beside them
//! (`editor`: generic live-editor tools, `project`, `recipes`, `batch`, `transactions`,
//! `toolsets`). No domain imports another: what several share is the kit below them,
//! [`kit`] (editor edits, file writes, scene documents, steps, the class table, Godot
//! and .NET as child processes), which imports no domain (`scripts/domain_imports.py`).
//! [`registry`] is the table every tool is registered in: its name, schema, safety
//! class, toolset and handler.

pub(crate) mod analysis;
pub(crate) mod animation;
pub(crate) mod audio;
pub(crate) mod batch;
pub(crate) mod change;
pub(crate) mod classref;
pub(crate) mod csharp;
pub(crate) mod debugger;
pub(crate) mod editor;
pub(crate) mod export;
pub(crate) mod files;
pub(crate) mod input;
pub(crate) mod kit;
pub(crate) mod navigation;
pub(crate) mod particles;
pub(crate) mod physics;
pub(crate) mod profiler;
pub(crate) mod project;
pub(crate) mod recipes;
pub(crate) mod registry;
pub(crate) mod resource;
pub(crate) mod runtime;
pub(crate) mod scene;
pub(crate) mod script;
pub(crate) mod settings;
pub(crate) mod shader;
pub(crate) mod spatial;
pub(crate) mod tests;
pub(crate) mod tilemap;
pub(crate) mod toolsets;
pub(crate) mod transactions;
pub(crate) mod ui;
pub(crate) mod visual_shader;

pub(crate) use registry::*;

impl Registry {
    /// Every built-in tool.
    pub(crate) fn builtin() -> Self {
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
