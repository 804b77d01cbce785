//! `create_nodes`: steps of the caller's own, applied with `scene.steps` as ONE undo
//! action in the scene named (opened, or made, if need be). The recipe plumbing it shares
//! with the family tools (physics, navigation, particles, spatial, tile cells) is the
//! kit's: `tools/kit/steps/`.

use std::sync::Arc;

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::honesty::{EditReply, EditVerdict, InTransaction, Persistence, Undo};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::state::AppState;
use crate::tools::kit::editor::{connected, query_as, run_effect_as, saved_diff, scene_text};
use crate::tools::kit::game::check::{
    CheckItem, SceneCheck, check_args, check_in, check_order, check_saved,
};
use crate::tools::kit::steps::{Steps, StepsDone, StepsEffect, StepsReply, meta, requests};
use crate::tools::reply_map;
use crate::tools::{Plan, ToolDef};
use serde_json::json;

// ---------------------------------------------------------------------------------
// create_nodes
// ---------------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateNodesArgs {
    /// In order; all checked before the first change. None: only check.
    #[serde(default)]
    #[schemars(length(max = 256))]
    steps: Vec<cmd::Step>,
    /// The .tscn to edit, opened if need be; a missing one is made with step 0 as root
    /// (parent "").
    #[serde(default)]
    scene: Option<ResPath>,
    /// Save the scene after the steps.
    #[serde(default)]
    save: bool,
    /// After the save (no steps: as saved; no scene either: a blank one): Godot
    /// Expressions run in order in the scene, headless (base: its root; from after
    /// _ready; {"frame": 30, "expression": …} once 30 physics frames ran); answers their
    /// values.
    #[serde(default)]
    #[schemars(length(max = 32))]
    check: Vec<CheckItem>,
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::planned(
        meta(
            Toolset::Build,
            "create_nodes",
            "Create and edit nodes as one undo action",
            "Create nodes, set properties of new or existing nodes (new sub-resources too), \
             groups and signal connections as ONE undo action; nothing changes if a step fails. With scene \
             and save: true one call opens (or creates), edits and saves the scene; the \
             editor starts itself.",
            class::Mutating,
        ),
        |state, a: CreateNodesArgs| {
            node_steps_only(&a.steps)?;
            if a.steps.is_empty() {
                return plan_check_only(state, a.scene, a.check);
            }
            let mut steps = Steps::default();
            for s in a.steps {
                steps.step(s);
            }
            check_args(&a.check, a.save)?;
            plan_in_scene(state, steps, a.scene, a.save, a.check)
        },
    )
    .staged(|a: CreateNodesArgs| {
        if a.scene.is_some() || a.save || !a.check.is_empty() {
            return Err(ToolError::invalid_params(
                if a.save {
                    "save"
                } else if a.scene.is_some() {
                    "scene"
                } else {
                    "check"
                },
                "inside a change, create_nodes edits the scene open in the editor and \
                 commit_change applies it: leave out scene, save and check (save_scene \
                 after the commit)",
            ));
        }
        node_steps_only(&a.steps)?;
        if a.steps.is_empty() {
            return Err(ToolError::invalid_params(
                "steps",
                "inside a change, create_nodes needs at least one step",
            ));
        }
        let out = reply_map(json!({"command": cmd::STEPS, "steps": a.steps.len()}));
        Ok((a.steps, out))
    })]
}

/// create_nodes' steps are node steps only (the agent's schema offers no other; the
/// family tools' steps are theirs), run or staged: the first other one is refused.
fn node_steps_only(steps: &[cmd::Step]) -> Result<(), ToolError> {
    match steps.iter().position(|s| !s.is_node_step()) {
        Some(i) => Err(ToolError::invalid_params(
            format!("steps[{i}].op"),
            "create_nodes takes create, set, group and connect steps",
        )),
        None => Ok(()),
    }
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
    /// What the save changed in the file (a unified diff).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    saved_diff: Option<String>,
    /// `check`'s findings, after the save (the change stands whatever they say).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    check: Option<SceneCheck>,
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

/// create_nodes' dry run: the steps checked in the edited scene, or, when the call must
/// open or create its scene first, on a stand-in the add-on makes of it (the file
/// instanced, the new root `create`) and frees, so it answers what the real call will
/// (agent run 8: a dry run passed that the real call refused). With save, the verdict is
/// the save's, not the unsaved edit's.
fn preview_steps(
    state: Arc<AppState>,
    mut check: cmd::Steps,
    around: &SceneAround,
    create: Option<&cmd::SceneCreate>,
) -> Box<dyn FnOnce() -> Result<SceneStepsDone, ToolError> + Send> {
    if let Some(path) = &around.opens {
        check.check_in = Some(match create {
            Some(root) => cmd::CheckIn::NewRoot {
                node_type: root.root_type.clone(),
                name: root
                    .root_name
                    .clone()
                    .unwrap_or_else(|| root.root_type.clone()),
            },
            None => cmd::CheckIn::File(path.clone()),
        });
    }
    let saves = around.saves.clone();
    Box::new(move || {
        let mut steps: StepsReply = query_as(&state, &check, None).map_err(hint_no_scene)?;
        if let Some(path) = saves {
            steps.verdict.persistence = crate::honesty::Persistence {
                persisted: false,
                reason: format!("a dry run writes nothing; applied, the call saves {path}"),
                hint: None,
            };
        }
        Ok(SceneStepsDone {
            steps,
            save_transaction_id: None,
            saved_diff: None,
            check: None,
        })
    })
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
    expressions: Vec<CheckItem>,
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
    let preview = Some(preview_steps(
        state.clone(),
        check,
        &effect.extra,
        create.as_ref().map(|(root, _)| root),
    ));
    let opens = effect.extra.opens.clone();
    Ok(Plan {
        effect,
        apply: Box::new(move |_| {
            type Done = EditReply<crate::tools::kit::editor::NoReplyFields>;
            let before = save
                .then(|| scene_text(&state, target.as_deref()))
                .flatten();
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
            let made_root = created.is_some();
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
            root_first(made_root, &mut steps.fields);
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
            let saved_diff = saved_diff(&state, target.as_deref(), before);
            let found = check_saved(&state, target.as_deref(), &expressions);
            Ok(SceneStepsDone {
                steps,
                save_transaction_id,
                saved_diff,
                check: found,
            })
        }),
        preview,
    })
}

/// create_nodes without steps: `check` in the scene as saved, nothing edited, no editor
/// (agent run 12: seven tasks re-saved a scene with a no-op step only to check it);
/// without a scene too, in a blank one (run 13: autoloads, resources and scripts were
/// checked with throwaway scripts of the agents' own).
fn plan_check_only(
    state: Arc<AppState>,
    scene: Option<ResPath>,
    check: Vec<CheckItem>,
) -> Result<Plan<StepsEffect<SceneAround>, SceneStepsDone>, ToolError> {
    if check.is_empty() {
        return Err(ToolError::invalid_params(
            "steps",
            "give steps, or check without steps to run the saved scene (or, without a \
             scene, a blank one) as is",
        ));
    }
    check_order(&check)?;
    if let Some(scene) = &scene
        && !state.project.resolve("scene", scene)?.is_file()
    {
        return Err(ToolError::invalid_params(
            "scene",
            format!("{scene} does not exist: a check without steps runs a saved scene"),
        ));
    }
    let around = SceneAround {
        opens: None,
        creates: false,
        saves: None,
    };
    let (effect, ..) = requests("create_nodes", Vec::new(), 0, around);
    Ok(Plan {
        effect,
        apply: Box::new(move |_| {
            let check = Some(check_in(&state, scene.as_ref(), &check));
            let ran = match &scene {
                Some(t) => format!("check ran {t} as saved"),
                None => "check ran a blank scene".to_string(),
            };
            Ok(SceneStepsDone {
                steps: EditReply {
                    verdict: EditVerdict {
                        persistence: Persistence {
                            persisted: false,
                            reason: format!("no steps: nothing was changed; {ran}"),
                            hint: None,
                        },
                        undo: Undo {
                            undoable: false,
                            undo_hint: None,
                        },
                    },
                    at: InTransaction {
                        transaction_id: None,
                    },
                    fields: StepsDone {
                        scene: scene.map(|s| s.to_string()).unwrap_or_default(),
                        steps: 0,
                        action: None,
                        nodes: None,
                    },
                },
                save_transaction_id: None,
                saved_diff: None,
                check,
            })
        }),
        preview: None,
    })
}

/// A new scene's root is the first node the call made (agents read the list without it
/// as the root missing: agent run 7).
fn root_first(made_root: bool, done: &mut StepsDone) {
    if made_root
        && let Some(nodes) = done.nodes.as_mut()
        && nodes.first().map(String::as_str) != Some(".")
    {
        nodes.insert(0, ".".into());
    }
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
