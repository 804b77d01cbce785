//! The tools, one folder per Godot domain (scene, script, resource, animation, …), each
//! holding that domain's reads and edits together; cross-cutting rooms beside them
//! (`editor`: generic live-editor tools, `project`, `recipes`, `batch`, `transactions`,
//! `toolsets`). [`registry`] is the table every tool is registered in: its name,
//! schema, safety class, toolset and handler.

pub mod analysis;
pub mod animation;
pub mod audio;
pub mod batch;
pub mod change;
pub mod classref;
pub mod common;
pub mod debugger;
pub mod editor;
pub mod export;
pub mod files;
pub mod godot_process;
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

impl Registry {
    /// Every built-in tool.
    pub fn builtin() -> Self {
        let mut r = Self::default();
        let catalog = toolsets::Catalog::default();
        for def in project::read::tools()
            .into_iter()
            .chain(scene::read::tools())
            .chain(editor::tools())
            .chain(transactions::tools())
            .chain(runtime::tools())
            .chain(runtime::helper_tools())
            .chain(runtime::screenshots::tools())
            .chain(files::write::tools())
            .chain(settings::tools())
            .chain(batch::tools())
            .chain(change::tools())
            .chain(toolsets::tools(catalog.clone()))
            .chain(analysis::tools())
            .chain(scene::nodes::tools())
            .chain(animation::read::tools())
            .chain(audio::read::tools())
            .chain(audio::edit::tools())
            .chain(shader::tools())
            .chain(scene::composite::tools())
            .chain(project::scaffold::tools())
            .chain(ui::read::tools())
            .chain(tilemap::read::tools())
            .chain(input::map::tools())
            .chain(classref::tools())
            .chain(script::tools())
            .chain(tests::tools())
            .chain(export::tools())
            .chain(recipes::tools())
            .chain(physics::tools())
            .chain(navigation::tools())
            .chain(particles::tools())
            .chain(spatial::tools())
            .chain(tilemap::edit::tools())
            .chain(scene::edit::tools())
            .chain(animation::edit::tools())
            .chain(ui::edit::tools())
            .chain(debugger::tools())
            .chain(runtime::game::tools())
            .chain(input::play::tools())
            .chain(profiler::monitors::tools())
            .chain(profiler::functions::tools())
            .chain(files::import::tools())
            .chain(settings::layers::tools())
            .chain(resource::material::tools())
            .chain(files::organize::tools())
            .chain(visual_shader::tools())
        {
            r.add(def);
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
