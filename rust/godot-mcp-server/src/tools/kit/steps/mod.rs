//! The recipe plumbing the family tools share: every family tool that edits the scene
//! (physics, navigation, particles, spatial, tile cells, create_nodes) is a list of
//! steps the server builds and the add-on applies with `scene.steps` as ONE undo action
//! (docs/editor-bridge.md). The add-on checks every step before the first change, so a
//! failing recipe leaves the editor unchanged; a dry run sends the same steps with
//! `check_only` and gets the verdict the real run stamps, from the same rule. A recipe
//! tool's definition is [`tool::recipe`].

pub(crate) mod tool;

use std::sync::Arc;

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::honesty::{EditReply, InTransaction};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class::Class;
use crate::state::AppState;
use crate::tools::kit::editor::{connected, godot_value, query_as, run_effect_as};
use crate::tools::{Plan, ToolMeta};

/// A tool's metadata: editor tools that change the scene have the editor-runtime effect.
pub(crate) const fn meta<C: Class>(
    toolset: Toolset,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    class: C,
) -> ToolMeta<C> {
    crate::tools::kit::editor::meta(name, title, description, class, toolset)
}

/// The steps of one recipe, built in order as the protocol's typed steps; `create`
/// answers the `$N` that names the node it makes, for later steps. A value or step that
/// does not decode is kept as the first error and refused by [`plan`], before anything
/// is sent.
#[derive(Default)]
pub(crate) struct Steps {
    pub(crate) steps: Vec<cmd::Step>,
    pub(crate) refused: Option<ToolError>,
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
    pub(crate) command: &'static str,
    pub(crate) action: String,
    pub(crate) steps: usize,
    #[serde(flatten)]
    pub(crate) extra: X,
}

/// The add-on's reply to `scene.steps` (steps.rs), in the one envelope: the
/// persistence verdict, the transaction of a real run, and [`StepsDone`]. A dry run's
/// `check_only` reply decodes into it too (no action, nodes or transaction).
pub(crate) type StepsReply = EditReply<StepsDone, InTransaction>;

/// What `scene.steps` did: the scene, the steps, and for a real run the action and the
/// created nodes.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct StepsDone {
    pub(crate) scene: String,
    pub(crate) steps: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) action: Option<String>,
    /// The created nodes' paths, relative to the scene root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nodes: Option<Vec<String>>,
}

/// What a recipe reports (`count` steps, `extra`) and the two `scene.steps` requests it
/// may send: the real one and its `check_only` copy for a dry run.
pub(crate) fn requests<X>(
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
        check_in: None,
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
pub(crate) enum Dim {
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
pub(crate) enum LayerRef {
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
        .map_err(|e| crate::tools::kit::scene_doc::parse_error(&pg, &e))?;
    Ok((1..=32)
        .filter_map(|i| {
            info.setting("layer_names", &format!("{kind}/layer_{i}"))
                .and_then(|p| p.value.as_str().map(|s| (i, s.to_string())))
        })
        .collect())
}
