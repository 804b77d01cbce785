//! `create_project_scaffold`: lay out a new project's skeleton on the file plane —
//! project.godot's name, main scene, features and renderer; `scenes/main.tscn` with its
//! script `scripts/main.gd`; Godot's `.gitignore` and `.gitattributes`. Destructive (file
//! writes no undo stack covers). The server only serves a folder that already holds a
//! project.godot, so that file is edited in place (its other settings and bytes kept);
//! every other file must be absent unless `overwrite`. Everything is planned (and
//! CAS-checked) before the first write; the files are then written as one journaled
//! change (`kit::file_write::write_each`): all of them or none.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use godot_mcp_formats::project_edit::ConfigText;
use godot_mcp_formats::variant::quote;

use crate::error::ToolError;
use crate::honesty::{Persistence, Undo};
use crate::planes::project::sha256_hex;
use crate::planes::project::{self as plane, Expect};
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::kit::common::on_disk;
use crate::tools::kit::common::read_text;
use crate::tools::kit::file_write::write_each;
use crate::tools::{Plan, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::planned(
        ToolMeta {
            name: "create_project_scaffold",
            title: "Create a project scaffold",
            description: "Lay out a new project: name, renderer and main scene in \
                project.godot, scenes/main.tscn, scripts/main.gd, .gitignore, .gitattributes. \
                Refuses existing files unless overwrite.",
            class: class::Destructive,
            toolset: Toolset::Scaffold,
            effect: Some(EffectKind::File),
        },
        plan_scaffold,
    )]
}

/// The main scene's root.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub(crate) enum MainType {
    Node2D,
    Node3D,
    Control,
}

impl MainType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Node2D => "Node2D",
            Self::Node3D => "Node3D",
            Self::Control => "Control",
        }
    }
}

/// Godot 4.4's three renderers.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Renderer {
    ForwardPlus,
    Mobile,
    GlCompatibility,
}

impl Renderer {
    /// The `config/features` name and the `rendering_method` value (none for the default).
    fn settings(self) -> (&'static str, Option<&'static str>) {
        match self {
            Self::ForwardPlus => ("Forward Plus", None),
            Self::Mobile => ("Mobile", Some("mobile")),
            Self::GlCompatibility => ("GL Compatibility", Some("gl_compatibility")),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScaffoldArgs {
    /// The project's name.
    name: String,
    /// Main scene root (default Node2D).
    #[serde(default)]
    main_type: Option<MainType>,
    /// Default forward_plus.
    #[serde(default)]
    renderer: Option<Renderer>,
    /// Replace files that exist (default false).
    #[serde(default)]
    overwrite: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ScaffoldFile {
    path: String,
    action: &'static str,
    sha256_before: Option<String>,
    sha256_after: String,
    bytes: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ScaffoldEffect {
    action: &'static str,
    files: Vec<ScaffoldFile>,
    main_scene: &'static str,
    #[serde(flatten)]
    persistence: Persistence,
    #[serde(flatten)]
    undo: Undo,
}

const MAIN_SCENE: &str = "res://scenes/main.tscn";
const MAIN_SCRIPT: &str = "res://scripts/main.gd";
/// What Godot 4.4's project manager writes for a new project.
const GITIGNORE: &str = "# Godot 4+ specific ignores\n.godot/\n/android/\n";
const GITATTRIBUTES: &str =
    "# Normalize EOL for all files that Git considers text files.\n* text=auto eol=lf\n";

/// What the scaffold's writes add: one transaction per file, in `files` order.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Written {
    transaction_ids: Vec<Option<String>>,
}

fn plan_scaffold(
    state: Arc<AppState>,
    args: ScaffoldArgs,
) -> Result<Plan<ScaffoldEffect, Written>, ToolError> {
    if args.name.trim().is_empty()
        || args.name.len() > 128
        || args.name.chars().any(char::is_control)
    {
        return Err(ToolError::invalid_params(
            "name",
            "name must be 1 to 128 characters without control characters",
        ));
    }
    let main_type = args.main_type.unwrap_or(MainType::Node2D).as_str();
    let (feature, method) = args.renderer.unwrap_or(Renderer::ForwardPlus).settings();

    // project.godot: edited in place.
    let pg = ResPath::parse("res://project.godot").map_err(|e| ToolError::internal(e.0))?;
    let pg_real = state.project.resolve("path", &pg)?;
    let pg_text = read_text(&state, "path", &pg, &pg_real)?;
    let mut config = ConfigText::parse(&pg_text).text().to_string();
    let mut set = |section: &str, key: &str, value: String| {
        config = ConfigText::parse(&config).set(section, key, &value);
    };
    set("application", "config/name", quote(&args.name));
    set("application", "run/main_scene", quote(MAIN_SCENE));
    set(
        "application",
        "config/features",
        format!("PackedStringArray(\"4.4\", {})", quote(feature)),
    );
    if let Some(m) = method {
        set("rendering", "renderer/rendering_method", quote(m));
        set("rendering", "renderer/rendering_method.mobile", quote(m));
    }

    let scene = format!(
        "[gd_scene load_steps=2 format=3]\n\n\
         [ext_resource type=\"Script\" path=\"{MAIN_SCRIPT}\" id=\"1_main\"]\n\n\
         [node name=\"Main\" type=\"{main_type}\"]\n\
         script = ExtResource(\"1_main\")\n"
    );
    let script = format!("extends {main_type}\n\n\nfunc _ready() -> void:\n\tpass\n");
    let mut files: Vec<(&str, String)> = vec![
        (MAIN_SCENE, scene),
        (MAIN_SCRIPT, script),
        ("res://.gitignore", GITIGNORE.into()),
        ("res://.gitattributes", GITATTRIBUTES.into()),
    ];
    let mut planned = Vec::new();
    let mut writes = Vec::new();
    let pg_before = sha256_hex(pg_text.as_bytes());
    let pg_outcome = plane::check_write(
        &state.project,
        "path",
        &pg,
        config.as_bytes(),
        Expect::Sha256(&pg_before),
    )?;
    planned.push(ScaffoldFile {
        path: pg.to_string(),
        action: "edit",
        sha256_before: Some(pg_before.clone()),
        sha256_after: pg_outcome.sha256_after,
        bytes: config.len(),
    });
    writes.push((pg, config.into_bytes(), Some(pg_before)));
    for (path, text) in files.drain(..) {
        let res = ResPath::parse(path).map_err(|e| ToolError::internal(e.0))?;
        let before = plane::current(&state.project, "path", &res)?.map(|(sha, _)| sha);
        if before.is_some() && !args.overwrite {
            return Err(ToolError::invalid_params(
                "overwrite",
                format!("{path} exists; nothing was written"),
            )
            .hint("Pass overwrite=true to replace the scaffold's files that exist."));
        }
        let expect = before.as_deref().map_or(Expect::Absent, Expect::Sha256);
        let outcome = plane::check_write(&state.project, "path", &res, text.as_bytes(), expect)?;
        planned.push(ScaffoldFile {
            path: path.to_string(),
            action: if before.is_some() {
                "overwrite"
            } else {
                "create"
            },
            sha256_before: before.clone(),
            sha256_after: outcome.sha256_after,
            bytes: text.len(),
        });
        writes.push((res, text.into_bytes(), before));
    }
    let effect = ScaffoldEffect {
        action: "scaffold",
        files: planned,
        main_scene: MAIN_SCENE,
        persistence: on_disk(
            "each file written to disk atomically through the journal",
            Some(
                "Open the project in Godot (or reload it) to import it; an editor already \
                 open keeps its own copy of project.godot.",
            ),
        ),
        undo: Undo::not_undo_tracked(),
    };
    Plan::new(effect, move |call| {
        let done = write_each(&state, call, "path", &writes)?;
        serde_json::from_value(done.into()).map_err(|e| ToolError::internal(e.to_string()))
    })
}
