//! `create_nodes` and the recipe plumbing the family tools share: every family tool that
//! edits the scene (physics, navigation, particles, spatial, tile cells) is a list of
//! steps the server builds and the add-on applies with `scene.steps` as ONE undo action
//! (docs/editor-bridge.md). The add-on checks every step before the first change, so a
//! failing recipe leaves the editor unchanged; a dry run sends the same steps with
//! `check_only` and gets the verdict the real run stamps, from the same rule.

pub(crate) mod tool;

use std::sync::Arc;

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::honesty::{EditReply, InTransaction};
use crate::respath::ResPath;
use crate::rules::{SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::kit::editor::{connected, godot_value, query_as, run_effect_as};
use crate::tools::{Plan, ToolDef, ToolMeta};

/// A tool's metadata: editor tools that change the scene have the editor-runtime effect.
pub(crate) const fn meta(
    toolset: Toolset,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    class: SafetyClass,
) -> ToolMeta {
    crate::tools::kit::editor::meta(name, title, description, class, toolset)
}

/// The steps of one recipe, built in order as the protocol's typed steps; `create`
/// answers the `$N` that names the node it makes, for later steps. A value or step that
/// does not decode is kept as the first error and refused by [`plan`], before anything
/// is sent.
#[derive(Default)]
pub(crate) struct Steps {
    steps: Vec<cmd::Step>,
    refused: Option<ToolError>,
}

impl Steps {
    pub(crate) fn create(&mut self, parent: &str, class: &str, name: &str) -> String {
        self.step(cmd::Step::Create {
            parent: parent.into(),
            node_type: class.into(),
            name: name.into(),
        });
        format!("${}", self.steps.len() - 1)
    }

    pub(crate) fn set(&mut self, node: &str, property: &str, value: Value) {
        let at = format!("steps[{}].value", self.steps.len());
        match godot_value(&at, &value) {
            Ok(value) => self.step(cmd::Step::Set {
                node: node.into(),
                property: property.into(),
                value,
            }),
            Err(e) => self.refuse(e),
        }
    }

    /// A typed step.
    pub(crate) fn step(&mut self, step: cmd::Step) {
        self.steps.push(step);
    }

    fn refuse(&mut self, e: ToolError) {
        self.refused.get_or_insert(e);
    }

    /// Set each `(property, value)` whose value is given.
    pub(crate) fn set_some(&mut self, node: &str, props: &[(&str, Option<Value>)]) {
        for (k, v) in props {
            if let Some(v) = v {
                self.set(node, k, v.clone());
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.steps.len()
    }
}

/// What a recipe's plan reports before it runs: the `scene.steps` request and what the
/// tool adds of its own (`extra`, e.g. the layer bits it computed).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct StepsEffect<X> {
    command: &'static str,
    action: String,
    steps: usize,
    #[serde(flatten)]
    extra: X,
}

/// The add-on's reply to `scene.steps` (steps.rs), in the one envelope: the
/// persistence verdict, the transaction of a real run, and [`StepsDone`]. A dry run's
/// `check_only` reply decodes into it too (no action, nodes or transaction).
pub(crate) type StepsReply = EditReply<StepsDone, InTransaction>;

/// What `scene.steps` did: the scene, the steps, and for a real run the action and the
/// created nodes.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct StepsDone {
    scene: String,
    steps: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    action: Option<String>,
    /// The created nodes' paths, relative to the scene root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nodes: Option<Vec<String>>,
}

/// What a recipe reports (`count` steps, `extra`) and the two `scene.steps` requests it
/// may send: the real one and its `check_only` copy for a dry run.
fn requests<X>(
    tool: &str,
    steps: Vec<cmd::Step>,
    count: usize,
    extra: X,
) -> (StepsEffect<X>, cmd::Steps, cmd::Steps) {
    let effect = StepsEffect {
        command: cmd::STEPS,
        action: format!("MCP: {tool}"),
        steps: count,
        extra,
    };
    let apply = cmd::Steps {
        action: effect.action.clone(),
        steps,
        check_only: false,
        scene: None,
        root_id: None,
    };
    let check = cmd::Steps {
        check_only: true,
        ..apply.clone()
    };
    (effect, apply, check)
}

/// The plan of a recipe: one `scene.steps` request, named after the tool. A dry run
/// sends the same steps with `check_only` (nothing changes; every step is checked).
pub(crate) fn plan<X: Serialize + JsonSchema>(
    state: Arc<AppState>,
    tool: &str,
    steps: Steps,
    extra: X,
) -> Result<Plan<StepsEffect<X>, StepsReply>, ToolError> {
    if let Some(e) = steps.refused {
        return Err(e);
    }
    connected(&state)?;
    let count = steps.steps.len();
    let (effect, apply, check) = requests(tool, steps.steps, count, extra);
    let probe_state = state.clone();
    Ok(Plan {
        effect,
        apply: Box::new(move |_| run_effect_as(&state, &apply, None, None)),
        preview: Some(Box::new(move || query_as(&probe_state, &check, None))),
    })
}

// ---------------------------------------------------------------------------------
// Typed values, as the bridge spells them (docs/editor-bridge.md, "Values")
// ---------------------------------------------------------------------------------

pub(crate) fn vec2(v: [f64; 2]) -> Value {
    json!({"$type": "Vector2", "x": v[0], "y": v[1]})
}

pub(crate) fn vec3(v: [f64; 3]) -> Value {
    json!({"$type": "Vector3", "x": v[0], "y": v[1], "z": v[2]})
}

pub(crate) fn color(c: [f64; 4]) -> Value {
    json!({"$type": "Color", "r": c[0], "g": c[1], "b": c[2], "a": c[3]})
}

/// A new built-in sub-resource.
pub(crate) fn new_resource(class: &str, properties: Value) -> Value {
    json!({"$type": "Resource", "class": class, "properties": properties})
}

/// A value from a list of numbers: a Vector2 or Vector3 by `dim`.
pub(crate) fn vector(dim: Dim, v: &[f64], param: &str) -> Result<Value, ToolError> {
    match (dim, v) {
        (Dim::TwoD, [x, y]) => Ok(vec2([*x, *y])),
        (Dim::ThreeD, [x, y, z]) => Ok(vec3([*x, *y, *z])),
        (Dim::TwoD, _) => Err(ToolError::invalid_params(param, "2d takes [x, y]")),
        (Dim::ThreeD, _) => Err(ToolError::invalid_params(param, "3d takes [x, y, z]")),
    }
}

// ---------------------------------------------------------------------------------
// Shared arguments
// ---------------------------------------------------------------------------------

/// 2D or 3D.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Dim {
    #[serde(rename = "2d")]
    TwoD,
    #[serde(rename = "3d")]
    ThreeD,
}

impl Dim {
    /// `Name2D` or `Name3D`.
    pub(crate) fn class(self, stem: &str) -> String {
        match self {
            Dim::TwoD => format!("{stem}2D"),
            Dim::ThreeD => format!("{stem}3D"),
        }
    }

    pub(crate) fn key(self) -> &'static str {
        match self {
            Dim::TwoD => "2d",
            Dim::ThreeD => "3d",
        }
    }
}

/// A layer: its number (1-32) or its name in Project Settings > Layer Names.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum LayerRef {
    Number(u32),
    Name(String),
}

/// The bitmask of `layers`, names looked up in project.godot's
/// `layer_names/<kind>/layer_N` (kind: `2d_physics`, `3d_navigation`, …).
pub(crate) fn layer_bits(
    state: &AppState,
    kind: &str,
    layers: &[LayerRef],
    param: &str,
) -> Result<i64, ToolError> {
    let mut names: Option<Vec<(u32, String)>> = None;
    let mut bits = 0i64;
    for l in layers {
        let n = match l {
            LayerRef::Number(n) if (1..=32).contains(n) => *n,
            LayerRef::Number(n) => {
                return Err(ToolError::invalid_params(
                    param,
                    format!("layer {n} is not 1..=32"),
                ));
            }
            LayerRef::Name(name) => {
                let table = match &names {
                    Some(t) => t,
                    None => names.insert(layer_names(state, kind)?),
                };
                table
                    .iter()
                    .find(|(_, n)| n == name)
                    .map(|(i, _)| *i)
                    .ok_or_else(|| {
                        let known: Vec<_> = table.iter().map(|(i, n)| format!("{i}={n}")).collect();
                        ToolError::invalid_params(
                            param,
                            format!(
                                "no {kind} layer is named {name:?} in project.godot \
                                 (named: {})",
                                if known.is_empty() {
                                    "none".to_string()
                                } else {
                                    known.join(", ")
                                }
                            ),
                        )
                    })?
            }
        };
        bits |= 1i64 << (n - 1);
    }
    Ok(bits)
}

/// The named layers of `kind` in project.godot.
fn layer_names(state: &AppState, kind: &str) -> Result<Vec<(u32, String)>, ToolError> {
    let pg = ResPath::parse("res://project.godot").map_err(|e| ToolError::internal(e.0))?;
    let real = state.project.resolve("path", &pg)?;
    let text = crate::tools::kit::common::read_text(state, "path", &pg, &real)?;
    let info = godot_mcp_formats::parse_project(&text)
        .map_err(|e| crate::tools::scene::read::parse_error(&pg, &e))?;
    Ok((1..=32)
        .filter_map(|i| {
            info.setting("layer_names", &format!("{kind}/layer_{i}"))
                .and_then(|p| p.value.as_str().map(|s| (i, s.to_string())))
        })
        .collect())
}

// ---------------------------------------------------------------------------------
// create_nodes
// ---------------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateNodesArgs {
    /// In order; all checked before the first change.
    #[schemars(length(min = 1, max = 256))]
    steps: Vec<cmd::Step>,
    /// The .tscn to edit, opened if need be; a missing one is made with step 0 as root
    /// (parent "").
    #[serde(default)]
    scene: Option<ResPath>,
    /// Save the scene after the steps.
    #[serde(default)]
    save: bool,
}

pub fn tools() -> Vec<ToolDef> {
    vec![ToolDef::planned(
        meta(
            Toolset::Build,
            "create_nodes",
            "Create and edit nodes as one undo action",
            "Create nodes, set properties of new or existing nodes (new sub-resources too), \
             groups and signal connections as ONE undo action; nothing changes if a step fails. With scene \
             and save: true one call opens (or creates), edits and saves the scene; the \
             editor starts itself.",
            SafetyClass::Mutating,
        ),
        |state, a: CreateNodesArgs| {
            let mut steps = Steps::default();
            for (i, s) in a.steps.into_iter().enumerate() {
                // The agent's schema offers only the node steps; the family tools'
                // steps are theirs.
                if !s.is_node_step() {
                    return Err(ToolError::invalid_params(
                        format!("steps[{i}].op"),
                        "create_nodes takes create, set, group and connect steps",
                    ));
                }
                steps.step(s);
            }
            plan_in_scene(state, steps, a.scene, a.save)
        },
    )]
}

/// What create_nodes does around its steps: the scene it opens or creates first, and
/// the file it saves after.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SceneAround {
    /// Opened (or created, `creates`) before the steps: it was not the edited scene.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    opens: Option<String>,
    /// A new .tscn made from step 0 (its root) before the other steps.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    creates: bool,
    /// Saved after the steps (save: true).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    saves: Option<String>,
}

/// create_nodes' answer: the steps' reply, and with save: true the save's transaction
/// (the verdict then says the edit is on disk, as the save's reply stamped it).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SceneStepsDone {
    #[serde(flatten)]
    steps: StepsReply,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    save_transaction_id: Option<String>,
}

/// `"$N"` (or `"$N/…"`) after step 0 is gone: step 0's node is the new scene's root
/// (`"."`), step N is step N-1.
fn shift_ref(r: &str) -> String {
    let Some(rest) = r.strip_prefix('$') else {
        return r.to_string();
    };
    let (num, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match num.parse::<usize>() {
        Ok(0) if tail.is_empty() => ".".into(),
        Ok(0) => tail[1..].to_string(),
        Ok(n) => format!("${}{tail}", n - 1),
        Err(_) => r.to_string(),
    }
}

/// What to do when no scene is open and none was named.
const NAME_THE_SCENE: &str = "Name the scene: create_nodes {\"scene\": \"res://main.tscn\", \
     \"steps\": [...], \"save\": true} opens it, edits it and saves it.";

/// No scene is open and none was named: say how to name one.
fn no_scene() -> ToolError {
    crate::rules::Precondition::ActiveScene
        .error()
        .hint(NAME_THE_SCENE)
}

/// The add-on's "no scene open" refusal, with the same hint.
fn hint_no_scene(e: ToolError) -> ToolError {
    if e.required.as_deref() == Some("active_scene") {
        e.hint(NAME_THE_SCENE)
    } else {
        e
    }
}

/// create_nodes in a named scene: opened first when it is not the edited one (`active`),
/// or, when the file does not exist, created from step 0's root (then dropped from the
/// steps; a new scene must be saved). The scene-create request and the folder it goes
/// in, for a new scene.
fn open_or_create(
    state: &AppState,
    path: &ResPath,
    steps: &mut Steps,
    save: bool,
    active: Option<&str>,
    around: &mut SceneAround,
) -> Result<Option<(cmd::SceneCreate, Option<std::path::PathBuf>)>, ToolError> {
    let p = path.to_string();
    if !p.ends_with(".tscn") && !p.ends_with(".scn") {
        return Err(ToolError::invalid_params(
            "scene",
            format!("{p} is not a .tscn"),
        ));
    }
    let real = state.project.resolve("scene", path)?;
    if !real.exists() {
        // A new scene: step 0 makes its root.
        let root = match steps.steps.first() {
            Some(cmd::Step::Create {
                parent,
                node_type,
                name,
            }) if parent.is_empty() => cmd::SceneCreate {
                path: p.clone(),
                root_type: node_type.clone(),
                root_name: Some(name.clone()),
            },
            _ => {
                return Err(ToolError::invalid_params(
                    "scene",
                    format!(
                        "{p} does not exist: to create it, make step 0 its root \
                         ({{\"op\": \"create\", \"parent\": \"\", \"type\": \"Node2D\", \
                         \"name\": \"Main\"}}) and pass save: true"
                    ),
                ));
            }
        };
        if !save {
            return Err(ToolError::invalid_params(
                "save",
                format!("creating {p} writes it: pass save: true"),
            ));
        }
        steps.steps = std::mem::take(&mut steps.steps)
            .into_iter()
            .skip(1)
            .map(|s| s.map_nodes(shift_ref))
            .collect();
        around.creates = true;
        around.opens = Some(p.clone());
        return Ok(Some((
            root,
            real.parent().map(std::path::Path::to_path_buf),
        )));
    } else if active != Some(p.as_str()) {
        around.opens = Some(p.clone());
    }
    Ok(None)
}

/// create_nodes' plan: the steps as one `scene.steps` request, in `scene` when named
/// (opened first, or created from step 0's root when the file does not exist), then
/// saved when `save` is set. Each part is its own journaled editor command, in order; a
/// part that fails stops the call and the error says which parts already happened.
fn plan_in_scene(
    state: Arc<AppState>,
    mut steps: Steps,
    scene: Option<ResPath>,
    save: bool,
) -> Result<Plan<StepsEffect<SceneAround>, SceneStepsDone>, ToolError> {
    if let Some(e) = steps.refused.take() {
        return Err(e);
    }
    let asked = steps.steps.len();
    connected(&state)?;
    // The edited scene, asked only when it decides something (a named scene to open, a
    // save to journal): a plain edit is one request, as before.
    let active = if scene.is_some() || save {
        crate::tools::kit::editor::active_scene(&state)?
    } else {
        None
    };
    let mut around = SceneAround {
        opens: None,
        creates: false,
        saves: None,
    };
    let create = match &scene {
        Some(path) => open_or_create(
            &state,
            path,
            &mut steps,
            save,
            active.as_deref(),
            &mut around,
        )?,
        None => None,
    };
    if let Some((i, _)) = steps
        .steps
        .iter()
        .enumerate()
        .find(|(_, s)| matches!(s, cmd::Step::Create { parent, .. } if parent.is_empty()))
    {
        return Err(ToolError::invalid_params(
            format!("steps[{i}].parent"),
            "parent \"\" makes a new scene's root: only as step 0, with a scene that does \
             not exist yet; \".\" is the edited scene's root",
        ));
    }
    let named = scene.is_some();
    let target = scene.map(|p| p.to_string()).or(active);
    if save {
        let Some(target) = &target else {
            return Err(no_scene());
        };
        around.saves = Some(target.clone());
    }
    // A path naming a node an earlier step makes is that step's "$N" (after a new
    // scene's root step is gone, so paths are from its root).
    steps.steps = crate::tools::kit::editor::own_paths(steps.steps);
    let (effect, mut apply, check) = requests("create_nodes", steps.steps, asked, around);
    if named {
        // Opened by this call: the steps run there only, never on a scene another
        // session opened in between.
        apply.scene = target.clone();
    }
    // A dry run checks the steps in the edited scene; one that must open or create its
    // scene first reports that, and the steps are checked when the real call runs.
    let preview: Option<Box<dyn FnOnce() -> Result<SceneStepsDone, ToolError> + Send>> =
        if effect.extra.opens.is_none() {
            let probe_state = state.clone();
            Some(Box::new(move || {
                Ok(SceneStepsDone {
                    steps: query_as(&probe_state, &check, None).map_err(hint_no_scene)?,
                    save_transaction_id: None,
                })
            }))
        } else {
            None
        };
    let opens = effect.extra.opens.clone();
    Ok(Plan {
        effect,
        apply: Box::new(move |_| {
            type Done = EditReply<crate::tools::kit::editor::NoReplyFields>;
            let mut created = None;
            if let Some((root, folder)) = create {
                // Godot saves into an existing folder only: make the scene's folder
                // (inside the project: its path was resolved there) as create_folder would.
                if let Some(folder) = folder {
                    std::fs::create_dir_all(&folder).map_err(|e| {
                        ToolError::internal(format!("could not create {}: {e}", folder.display()))
                    })?;
                }
                created = Some(run_effect_as::<_, Done>(
                    &state,
                    &root,
                    Some(root.path.clone()),
                    None,
                )?);
            } else if let Some(path) = opens {
                run_effect_as::<_, Done>(
                    &state,
                    &cmd::SceneOpen { path: path.clone() },
                    Some(path),
                    None,
                )?;
            }
            let mut steps: StepsReply = match created {
                // A new scene of its root alone: the create was the whole edit (the
                // editor refuses an empty step list).
                Some(root) if apply.steps.is_empty() => EditReply {
                    verdict: root.verdict,
                    at: InTransaction {
                        transaction_id: root.at.transaction_id,
                    },
                    fields: StepsDone {
                        scene: target.clone().unwrap_or_default(),
                        steps: 0,
                        action: None,
                        nodes: Some(vec![".".into()]),
                    },
                },
                _ => run_effect_as(&state, &apply, None, None).map_err(hint_no_scene)?,
            };
            // The steps the agent sent, the new scene's root step too.
            steps.fields.steps = asked;
            let mut save_transaction_id = None;
            if save {
                let saved: Done =
                    run_effect_as(&state, &cmd::SceneSave { path: None }, target.clone(), None)
                        .map_err(|e| {
                            let why = e.message.clone();
                            let target = target.as_deref().unwrap_or("the scene");
                            e.hint(format!(
                        "The steps were applied in the editor (one undo action) but {target} \
                         was not saved ({why}); save it with save_scene once the cause is fixed."
                    ))
                        })?;
                steps.verdict.persistence = saved.verdict.persistence;
                save_transaction_id = saved.at.transaction_id;
            }
            Ok(SceneStepsDone {
                steps,
                save_transaction_id,
            })
        }),
        preview,
    })
}

#[cfg(test)]
mod scene_tests {
    use super::shift_ref;

    /// Step 0 of a new scene becomes its root: `$0` is the root, later steps shift down.
    #[test]
    fn refs_shift_past_the_root_step() {
        assert_eq!(shift_ref("$0"), ".");
        assert_eq!(shift_ref("$0/Sprite"), "Sprite");
        assert_eq!(shift_ref("$3"), "$2");
        assert_eq!(shift_ref("$2/A/B"), "$1/A/B");
        assert_eq!(shift_ref("Player"), "Player");
        assert_eq!(shift_ref("$x"), "$x");
    }
}
