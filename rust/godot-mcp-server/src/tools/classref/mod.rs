//! The class-reference tools: a class's API and a search of the whole reference
//! ([`lookup`]). The class table they read, loaded once per engine from the project's
//! Godot binary, is the kit's (`tools/kit/class_db/`).

mod lookup;

pub use lookup::*;

use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::tools::kit::class_db::{ClassDb, class_db};
use crate::tools::{ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "get_class_reference",
                title: "Godot class reference",
                description: "A Godot class's API from the engine (--doctool): inheritance \
                    chain, method signatures, properties with types and defaults, signals, \
                    constants and enums, with the engine's descriptions. `member` filters by name.",
                class: class::ReadOnly,
                toolset: Toolset::ClassRef,
                effect: Some(EffectKind::ProcessLaunch),
            },
            get_class_reference,
        ),
        ToolDef::new(
            ToolMeta {
                name: "search_class_reference",
                title: "Search the class reference",
                description: "Search Godot class, method, property, signal and constant \
                    names (case-insensitive substring); exact and prefix matches first, paged.",
                class: class::ReadOnly,
                toolset: Toolset::ClassRef,
                effect: Some(EffectKind::ProcessLaunch),
            },
            search_class_reference,
        ),
    ]
}
