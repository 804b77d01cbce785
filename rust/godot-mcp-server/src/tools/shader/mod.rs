//! Shaders: create and edit `.gdshader` files (file plane, through the journal's one
//! write seam, destructive like every file write) and `shader_validate`, a compile
//! check by the engine itself.
//!
//! What compiles: Godot 4.4's headless build runs the dummy renderer, whose
//! `shader_set_code` still hands the code to `ShaderLanguage` with the shader type's
//! built-ins and stage functions (servers/rendering/dummy/storage/material_storage.cpp):
//! the full front end — syntax, types, identifiers, uniforms and hints, render modes.
//! It prints `SHADER ERROR: <message>` then `at: (null) (:<line>)` (captured in
//! tests/fixtures/godot-4.4.1/shader_validate). What it does not run is a GPU driver's
//! GLSL compile of the generated code, which only a renderer build with a display does.
//! The check runs in a private throw-away project under the state dir (the shader, the
//! `.gdshaderinc` files it includes, a loader script), so the user's project and its
//! `.godot/` are never touched; without a Godot binary the call fails with the
//! `godot_binary` precondition.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, absent_when_none};
use crate::planes::project::{self as plane, Expect};
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::kit::common::read_text;
use crate::tools::kit::editor::{
    EditReply, blocking_as, godot_value, node_plan_as, query_as, reply_fields,
};
use crate::tools::kit::file_write::plan_write;
use crate::tools::kit::godot_process::{godot, run_supervised, tail_lines, temp_folder};
use crate::tools::{Call, Out, ToolDef, ToolMeta};
use godot_mcp_protocol::commands as cmd;

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::planned(
            ToolMeta {
                name: "create_shader",
                title: "Create a shader",
                description: "Create a .gdshader file from the template of a shader_type \
                    (canvas_item, spatial, particles, sky, fog) or given code.",
                class: class::Destructive,
                toolset: Toolset::Shaders,
                effect: Some(EffectKind::File),
            },
            plan_create_shader,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "edit_shader",
                title: "Edit a shader",
                description: "Replace a .gdshader or .gdshaderinc file's code; refused \
                    unchanged unless expected_sha256 is the file's sha256 now.",
                class: class::Destructive,
                toolset: Toolset::Shaders,
                effect: Some(EffectKind::File),
            },
            plan_edit_shader,
        ),
        ToolDef::new(
            ToolMeta {
                name: "shader_validate",
                title: "Validate a shader",
                description: "Compile a .gdshader (file or code) with the engine's shader \
                    compiler: errors with line numbers, and its uniforms. Needs a Godot binary.",
                class: class::ReadOnly,
                toolset: Toolset::Shaders,
                effect: Some(EffectKind::ProcessLaunch),
            },
            shader_validate,
        ),
        ToolDef::planned(
            editor_meta(
                "assign_shader_material",
                "Assign a shader material",
                "Put a new ShaderMaterial with a .gdshader on a node's material (or \
                 material_override) in the edited scene (one undo action).",
                class::Mutating,
            ),
            |state, a: AssignMaterialArgs| {
                require_ext("shader", &a.shader, &["gdshader"])?;
                let p = cmd::ShaderAssignMaterial {
                    node: a.node.clone(),
                    shader: a.shader.to_string(),
                };
                node_plan_as::<_, AssignReply>(state, "set_property", a.node, &p)
            },
        ),
        ToolDef::new(
            editor_meta(
                "get_shader_uniforms",
                "Get shader uniforms",
                "The uniforms of a node's ShaderMaterial in the edited scene: name, type, \
                 hint and current value.",
                class::ReadOnly,
            ),
            |Call { state, args: a, .. }: Call<UniformNodeArgs>| async move {
                blocking_as(move || {
                    let p = cmd::ShaderUniforms { node: a.node };
                    query_as::<_, UniformsReply>(&state, &p, Some(&p.node))
                })
                .await
            },
        ),
        ToolDef::planned(
            editor_meta(
                "set_shader_uniform",
                "Set a shader uniform",
                "Set a uniform of a node's ShaderMaterial in the edited scene (one undo \
                 action).",
                class::Mutating,
            ),
            |state, a: SetUniformArgs| {
                let p = cmd::ShaderSetUniform {
                    value: godot_value("value", &a.value)?,
                    node: a.node.clone(),
                    name: a.name,
                };
                node_plan_as::<_, SetUniformReply>(state, "set_property", a.node, &p)
            },
        ),
    ]
}

reply_fields!(
    /// shader.assign_material's own reply fields (a dry run's probe has none).
    struct AssignFields {
        node: String,
        property: String,
        shader: String,
        replaced: bool,
    }
);

/// The add-on's reply to shader.assign_material (its persistence probe on a dry run:
/// the verdict and `scene` only).
type AssignReply = EditReply<AssignFields>;

/// shader.set_uniform's own reply fields (a dry run's probe has none).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct UniformFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    uniform: Option<String>,
    /// The uniform's value now, as a Godot value.
    #[serde(
        default,
        deserialize_with = "crate::tools::kit::editor::present",
        skip_serializing_if = "Option::is_none"
    )]
    value: Option<Value>,
    /// Its value before, as a Godot value.
    #[serde(
        default,
        deserialize_with = "crate::tools::kit::editor::present",
        skip_serializing_if = "Option::is_none"
    )]
    previous: Option<Value>,
}

/// The add-on's reply to shader.set_uniform (a dry run: the probe's verdict and `scene`).
type SetUniformReply = EditReply<UniformFields>;

/// One uniform of a node's ShaderMaterial, with its value.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct MaterialUniform {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
    hint: Option<i64>,
    hint_string: Option<String>,
    /// The material's value, as a Godot value.
    #[serde(deserialize_with = "crate::tools::kit::editor::present")]
    value: Option<Value>,
}

/// The add-on's reply to shader.uniforms (`material_path` only when there is a shader).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct UniformsReply {
    node: String,
    shader: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    material_path: Option<String>,
    uniforms: Vec<MaterialUniform>,
}

/// A tool of this toolset on the editor plane.
fn editor_meta<C: class::Class>(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    class: C,
) -> ToolMeta<C> {
    crate::tools::kit::editor::editor_meta(Toolset::Shaders, class, name, title, description)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AssignMaterialArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// The .gdshader.
    shader: ResPath,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UniformNodeArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetUniformArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// The uniform's name.
    name: String,
    /// JSON, or a Godot type as in set_node_property.
    value: Value,
}

/// Shader types Godot 4.4 compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ShaderType {
    CanvasItem,
    Spatial,
    Particles,
    Sky,
    Fog,
}

impl ShaderType {
    fn as_str(self) -> &'static str {
        match self {
            Self::CanvasItem => "canvas_item",
            Self::Spatial => "spatial",
            Self::Particles => "particles",
            Self::Sky => "sky",
            Self::Fog => "fog",
        }
    }

    /// A new shader of this type: the declaration and its stage functions, empty.
    fn template(self) -> String {
        let stages = match self {
            Self::CanvasItem | Self::Spatial => {
                "void vertex() {\n\t// Called for every vertex the material is visible on.\n}\n\n\
                 void fragment() {\n\t// Called for every pixel the material is visible on.\n}\n"
            }
            Self::Particles => {
                "void start() {\n\t// Called when a particle is spawned.\n}\n\n\
                 void process() {\n\t// Called every frame on existing particles.\n}\n"
            }
            Self::Sky => {
                "void sky() {\n\t// Called for every visible pixel of the sky and its \
                 radiance cubemap.\n}\n"
            }
            Self::Fog => {
                "void fog() {\n\t// Called for every froxel touched by the FogVolume.\n}\n"
            }
        };
        format!("shader_type {};\n\n{stages}", self.as_str())
    }
}

fn require_ext(param: &str, path: &ResPath, exts: &[&str]) -> Result<(), ToolError> {
    match path.extension() {
        Some(e) if exts.contains(&e.as_str()) => Ok(()),
        _ => Err(ToolError::invalid_params(
            param,
            format!(
                "{path} is not a {} file",
                exts.iter()
                    .map(|e| format!(".{e}"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        )),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateShaderArgs {
    /// The new .gdshader file.
    path: ResPath,
    /// Template to start from (default canvas_item).
    #[serde(default)]
    shader_type: Option<ShaderType>,
    /// Full code instead of the template.
    #[serde(default)]
    code: Option<String>,
}

fn plan_create_shader(
    state: Arc<AppState>,
    args: CreateShaderArgs,
) -> Result<crate::tools::kit::file_write::WritePlan, ToolError> {
    require_ext("path", &args.path, &["gdshader"])?;
    let code = match (args.code, args.shader_type) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid_params(
                "code",
                "give shader_type (a template) or code, not both",
            ));
        }
        (Some(c), None) => c,
        (None, t) => t.unwrap_or(ShaderType::CanvasItem).template(),
    };
    if plane::current(&state.project, "path", &args.path)?.is_some() {
        return Err(
            ToolError::invalid_params("path", format!("{} already exists", args.path))
                .hint("Use edit_shader (with expected_sha256 from scripts_read) to replace it."),
        );
    }
    plan_write(
        &state,
        "path",
        args.path,
        code.into_bytes(),
        Expect::Absent,
        Persistence::written_to_disk(),
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditShaderArgs {
    /// The .gdshader or .gdshaderinc file.
    path: ResPath,
    /// The full new code.
    code: String,
    /// The file's sha256 now (from scripts_read).
    expected_sha256: String,
}

fn plan_edit_shader(
    state: Arc<AppState>,
    args: EditShaderArgs,
) -> Result<crate::tools::kit::file_write::WritePlan, ToolError> {
    require_ext("path", &args.path, &["gdshader", "gdshaderinc"])?;
    if plane::current(&state.project, "path", &args.path)?.is_none() {
        return Err(
            ToolError::not_found(format!("{} does not exist", args.path))
                .param("path")
                .hint("Create it with create_shader."),
        );
    }
    plan_write(
        &state,
        "path",
        args.path,
        args.code.into_bytes(),
        Expect::Sha256(&args.expected_sha256),
        Persistence::written_to_disk(),
    )
}

// ---------------------------------------------------------------------------------
// shader_validate
// ---------------------------------------------------------------------------------

/// Longest a check may take (a headless start and one compile: ~1 s measured).
const VALIDATE_TIMEOUT: Duration = Duration::from_secs(60);
/// Most shader files one check copies (the shader and what it includes).
const MAX_INCLUDES: usize = 32;
/// Longest code accepted.
const MAX_CODE: usize = 512 * 1024;

/// The loader the private project runs: loads the shader (compiling it) and prints its
/// uniforms as one marked JSON line. Also in tests/fixtures/godot-4.4.1/shader_validate.
const VALIDATE_GD: &str =
    include_str!("../../../../../tests/fixtures/godot-4.4.1/shader_validate/validate.gd");
const MARKER: &str = "SHADER_CHECK ";

/// One compile error, as the engine reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ShaderError {
    /// 1-based line in the checked shader; absent when the engine named none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub message: String,
}

/// The compile errors in the engine's stderr: each `SHADER ERROR: <message>` with the
/// line of the `at: … (:<line>)` after it, and the dummy renderer's refusal of a
/// missing or unknown `shader_type`. Engine noise (`No renderers available`, the
/// `Shader compilation failed` echo) is not the shader's error and is left out.
pub(crate) fn parse_shader_errors(stderr: &str) -> Vec<ShaderError> {
    let mut out: Vec<ShaderError> = Vec::new();
    let mut lines = stderr.lines().peekable();
    while let Some(l) = lines.next() {
        if let Some(msg) = l.strip_prefix("SHADER ERROR: ") {
            let line = lines
                .peek()
                .filter(|n| n.trim_start().starts_with("at: "))
                .and_then(|n| {
                    let inner = n.trim_end().strip_suffix(')')?;
                    let num = inner.rsplit_once(':')?.1;
                    num.parse::<u32>().ok()
                });
            if line.is_some() {
                lines.next();
            }
            out.push(ShaderError {
                line,
                message: msg.trim().to_string(),
            });
        } else if let Some(rest) = l.strip_prefix("ERROR: Shader type ")
            && let Some(t) = rest.strip_suffix(" not supported in Dummy renderer.")
        {
            out.push(ShaderError {
                line: None,
                message: if t.trim().is_empty() {
                    "no shader_type declaration (the first statement must be `shader_type \
                     canvas_item;`, spatial, particles, sky or fog)"
                        .into()
                } else {
                    format!("shader_type {} is not a shader type", t.trim())
                },
            });
        }
    }
    out
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ValidateArgs {
    /// A .gdshader in the project.
    #[serde(default)]
    path: Option<ResPath>,
    /// Or the code itself.
    #[serde(default)]
    code: Option<String>,
}

/// The `res://` paths of the `#include "…"` lines of `code`.
fn includes(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("#include")?;
            let rest = rest.trim();
            let inner = rest.strip_prefix('"')?;
            Some(inner[..inner.find('"')?].to_string())
        })
        .collect()
}

/// Copy the `.gdshaderinc` files `code` includes (transitively) from the project into
/// the private one, at the same res:// paths. A relative or missing include is left for
/// the engine to report.
fn copy_includes(state: &AppState, code: &str, into: &Path) -> Result<Vec<String>, ToolError> {
    let mut todo = includes(code);
    let mut copied: Vec<String> = Vec::new();
    while let Some(inc) = todo.pop() {
        if copied.contains(&inc) || !inc.starts_with("res://") {
            continue;
        }
        if copied.len() >= MAX_INCLUDES {
            return Err(ToolError::new(
                ErrorCode::TooLarge,
                format!("the shader includes more than {MAX_INCLUDES} files"),
            ));
        }
        let Ok(res) = ResPath::parse(&inc) else {
            continue;
        };
        let Ok(real) = state.project.resolve("path", &res) else {
            continue;
        };
        let Ok(text) = read_text(state, "path", &res, &real) else {
            continue;
        };
        let target = into.join(res.rel());
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ToolError::internal(e.to_string()))?;
        }
        std::fs::write(&target, &text).map_err(|e| ToolError::internal(e.to_string()))?;
        todo.extend(includes(&text));
        copied.push(inc);
    }
    Ok(copied)
}

/// One uniform of a checked shader, as the loader script lists it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShaderUniform {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
    hint: serde_json::Number,
    hint_string: String,
}

/// shader_validate's result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ShaderCheck {
    checked: String,
    ok: bool,
    errors: Vec<ShaderError>,
    uniforms: Vec<ShaderUniform>,
    included: Vec<String>,
    compiler: &'static str,
}

async fn shader_validate(Call { state, args, .. }: Call<ValidateArgs>) -> Out<ShaderCheck> {
    let (code, checked) = match (&args.path, args.code) {
        (Some(p), None) => {
            require_ext("path", p, &["gdshader"])?;
            let real = state.project.resolve("path", p)?;
            if !real.is_file() {
                return Err(ToolError::not_found(format!("{p} does not exist")).param("path"));
            }
            (read_text(&state, "path", p, &real)?, p.to_string())
        }
        (None, Some(c)) => (c, "code".to_string()),
        _ => {
            return Err(ToolError::invalid_params(
                "path",
                "give exactly one of `path` (a .gdshader) or `code`",
            ));
        }
    };
    if code.len() > MAX_CODE {
        return Err(
            ToolError::new(ErrorCode::TooLarge, "the shader is larger than 512 KiB").param("code"),
        );
    }
    let program = godot(&state)?;
    // A private project: the shader, its includes and the loader, nothing of the user's.
    let base = state.journal.lock().state_dir().join("shader_validate");
    let work = temp_folder(&base, "")?;
    let dir = work.path();
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| ToolError::internal(e.to_string()))
    };
    let result: Result<ShaderCheck, ToolError> = async {
        write("project.godot", "config_version=5\n")?;
        write("validate.gd", VALIDATE_GD)?;
        write("shader.gdshader", &code)?;
        let included = copy_includes(&state, &code, dir)?;
        let (ended, stdout, stderr) = run_supervised(
            &state,
            program,
            vec![
                "--headless".into(),
                "--path".into(),
                dir.display().to_string(),
                "--script".into(),
                "res://validate.gd".into(),
            ],
            "shader_validate",
            VALIDATE_TIMEOUT,
        )
        .await?;
        let errors = parse_shader_errors(&stderr);
        let report: Option<Value> = stdout
            .lines()
            .find_map(|l| l.strip_prefix(MARKER))
            .and_then(|j| serde_json::from_str(j).ok());
        let Some(report) = report else {
            // The loader never reported: the engine failed before the check ran.
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!(
                    "Godot exited ({:?}) without checking the shader",
                    ended.code
                ),
            )
            .details(json!({"output_tail": tail_lines(&stderr, 10)})));
        };
        let ok = errors.is_empty() && report["loaded"] == true;
        let uniforms = if ok {
            serde_json::from_value(report["uniforms"].clone()).map_err(|e| {
                ToolError::internal(format!("the shader check's uniform list: {e}"))
            })?
        } else {
            Vec::new()
        };
        Ok(ShaderCheck {
            checked,
            ok,
            errors,
            uniforms,
            included,
            compiler: "the engine's shader compiler (ShaderLanguage, headless); no GPU driver compile",
        })
    }
    .await;
    drop(work);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/godot-4.4.1/shader_validate/"
    );

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{FIX}{name}")).unwrap()
    }

    #[test]
    fn reads_the_errors_godot_printed_with_their_lines() {
        assert_eq!(
            parse_shader_errors(&fixture("bad.stderr")),
            [ShaderError {
                line: Some(7),
                message: "Unknown identifier in expression: 'undefined_thing'.".into()
            }]
        );
        assert_eq!(
            parse_shader_errors(&fixture("syntax.stderr")),
            [ShaderError {
                line: Some(8),
                message: "Expected a ';'.".into()
            }]
        );
        let none = parse_shader_errors(&fixture("notype.stderr"));
        assert_eq!(none.len(), 1);
        assert!(none[0].message.contains("no shader_type"), "{none:?}");
        assert!(parse_shader_errors(&fixture("good.stderr")).is_empty());
    }

    #[test]
    fn finds_includes() {
        assert_eq!(
            includes(
                "shader_type spatial;\n  #include \"res://a.gdshaderinc\"\n#include \"b.inc\"\n"
            ),
            ["res://a.gdshaderinc", "b.inc"]
        );
    }
}
