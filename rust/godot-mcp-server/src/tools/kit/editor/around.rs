//! `scene` and `save` around an editor edit (issue #40): a family tool that edits the
//! live scene (tile cells, animations) can name the `.tscn` to edit and ask it saved, so
//! one call opens, edits and saves it, as `create_nodes` does, instead of three tools
//! from two more toolsets (`open_scene`, the edit, `save_scene`).
//!
//! Each part is its own journaled editor command, in order: the open (only when the
//! scene is not already the edited one), the tool's own edit, the save. A part that
//! fails stops the call; a failed save says the edit is in the editor, unsaved.

use std::sync::Arc;

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::Serialize;

use super::{EditReply, NoReplyFields, active_scene, connected, run_effect_as};
use crate::error::ToolError;
use crate::honesty::absent_when_none;
use crate::respath::ResPath;
use crate::rules::Precondition;
use crate::state::AppState;
use crate::tools::Plan;
use crate::tools::kit::game::check::{CheckItem, SceneCheck, check_args, check_saved};

/// What the call does around the tool's edit, reported before it runs: the tool's own
/// effect (absent when the scene must be opened first: the edit is planned there), the
/// scene it opens and the file it saves.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Around<E> {
    #[serde(flatten)]
    edit: Option<E>,
    /// Opened before the edit: it was not the edited scene.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    opens: Option<String>,
    /// Saved after the edit (save: true).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    saves: Option<String>,
}

/// The edit's reply and, with save: true, the save's transaction (the verdict then says
/// the edit is on disk, as the save's reply stamped it) and `check`'s findings.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Saved<R> {
    #[serde(flatten)]
    reply: R,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    save_transaction_id: Option<String>,
    /// What the save changed in the file (a unified diff).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    saved_diff: Option<String>,
    /// `check`'s findings, after the save (the edit stands whatever they say).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    check: Option<SceneCheck>,
}

/// An editor tool's arguments, its own fields followed by `scene`, `save` and `check`:
/// one declaration for every tool [`in_scene`] serves (serde's `flatten` would lose
/// `deny_unknown_fields`, which refuses a misspelt argument).
macro_rules! in_scene_args {
    ($(#[$m:meta])* $vis:vis struct $name:ident {
        $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$m])*
        $vis struct $name {
            $($(#[$fm])* $field: $ty,)*
            /// The .tscn to edit, opened if need be.
            #[serde(default)]
            scene: Option<$crate::respath::ResPath>,
            /// Save the scene after the edit.
            #[serde(default)]
            save: bool,
            /// With save: expressions the engine answers in the saved scene (create_nodes' check).
            #[serde(default)]
            #[schemars(length(max = 32))]
            check: Vec<$crate::tools::kit::game::check::CheckItem>,
        }
    };
}
pub(crate) use in_scene_args;

/// A tool's plan, made now (its scene is the edited one) or after the open.
enum Later<P, M> {
    Ready(P),
    AfterOpen(M),
}

/// An editor edit's plan in its scene: [`Around`] its effect, [`Saved`] its reply.
pub(crate) type InScenePlan<E, T, S> = Plan<Around<E>, Saved<EditReply<T, S>>>;

/// The hint of an edit left unsaved by a tool that takes `save`.
const SAVE_TOO: &str = "Pass save: true to save the scene with the edit (or call save_scene).";

/// An edit left in the editor names this tool's own `save` (run 9: agents were told
/// of save_scene, a tool not listed by default).
fn save_too(p: &mut crate::honesty::Persistence) {
    if !p.persisted && p.hint.as_deref().is_some_and(|h| h.contains("save_scene")) {
        p.hint = Some(SAVE_TOO.into());
    }
}

/// The plan `make` builds, run in `scene` (opened first when it is not the edited one)
/// and followed by a save of the scene when `save` is set, then `check` run in it. Without either, the plan is
/// the tool's own, unchanged (one request, as before).
pub(crate) fn in_scene<E, T, S, M>(
    state: Arc<AppState>,
    scene: Option<ResPath>,
    save: bool,
    check: Vec<CheckItem>,
    make: M,
) -> Result<InScenePlan<E, T, S>, ToolError>
where
    E: Send + 'static,
    T: Send + 'static,
    S: Send + 'static,
    M: FnOnce(Arc<AppState>) -> Result<Plan<E, EditReply<T, S>>, ToolError> + Send + 'static,
{
    check_args(&check, save)?;
    let mut opens = None;
    let mut saves = None;
    if scene.is_some() || save {
        connected(&state)?;
        let active = active_scene(&state)?;
        if let Some(path) = &scene {
            let p = path.to_string();
            if !p.ends_with(".tscn") && !p.ends_with(".scn") {
                return Err(ToolError::invalid_params(
                    "scene",
                    format!("{p} is not a .tscn"),
                ));
            }
            if !state.project.resolve("scene", path)?.exists() {
                return Err(ToolError::not_found(format!(
                    "{p} does not exist: create_nodes with scene and save: true makes it"
                )));
            }
            if active.as_deref() != Some(p.as_str()) {
                opens = Some(p);
            }
        }
        if save {
            let target = scene.map(|p| p.to_string()).or(active);
            let Some(target) = target else {
                return Err(Precondition::ActiveScene
                    .error()
                    .hint("Name the scene to edit and save: \"scene\": \"res://main.tscn\"."));
            };
            saves = Some(target);
        }
    }
    let (edit, later, preview) = if opens.is_none() {
        let plan = make(state.clone())?;
        let preview = plan.preview;
        (Some(plan.effect), Later::Ready(plan.apply), preview)
    } else {
        // The edit is planned in its scene, once it is open; a dry run reports the open.
        (None, Later::AfterOpen(make), None)
    };
    let effect = Around {
        edit,
        opens: opens.clone(),
        saves: saves.clone(),
    };
    Ok(Plan {
        effect,
        apply: Box::new(move |call| {
            let apply = match later {
                Later::Ready(apply) => apply,
                Later::AfterOpen(make) => {
                    let path = opens.unwrap_or_default();
                    let _: EditReply<NoReplyFields> = run_effect_as(
                        &state,
                        &cmd::SceneOpen { path: path.clone() },
                        Some(path),
                        None,
                    )?;
                    make(state.clone())?.apply
                }
            };
            let mut reply = apply(call)?;
            if saves.is_none() {
                save_too(&mut reply.verdict.persistence);
            }
            let mut save_transaction_id = None;
            let checked_in = saves.clone();
            let before = scene_text(&state, saves.as_deref());
            if let Some(target) = saves {
                let saved: EditReply<NoReplyFields> = run_effect_as(
                    &state,
                    &cmd::SceneSave { path: None },
                    Some(target.clone()),
                    None,
                )
                .map_err(|e| {
                    let why = e.message.clone();
                    e.hint(format!(
                        "The edit was applied in the editor (one undo action) but {target} \
                         was not saved ({why}); save it with save_scene once the cause is fixed."
                    ))
                })?;
                reply.verdict.persistence = saved.verdict.persistence;
                save_transaction_id = saved.at.transaction_id;
            }
            Ok(Saved {
                reply,
                save_transaction_id,
                saved_diff: saved_diff(&state, checked_in.as_deref(), before),
                check: check_saved(&state, checked_in.as_deref(), &check),
            })
        }),
        preview: preview.map(|p| {
            Box::new(move || {
                let mut reply = p()?;
                if !save {
                    save_too(&mut reply.verdict.persistence);
                }
                Ok(Saved {
                    reply,
                    save_transaction_id: None,
                    saved_diff: None,
                    check: None,
                })
            }) as Box<dyn FnOnce() -> _ + Send>
        }),
    })
}

/// Most lines of a save's diff shown.
const MAX_DIFF_LINES: usize = 60;

/// The text of the scene file `res` now (`""` for a file that does not exist yet):
/// read before a save and after it for [`saved_diff`].
pub(crate) fn scene_text(state: &AppState, res: Option<&str>) -> Option<String> {
    let path = ResPath::parse(res?).ok()?;
    let real = state.project.resolve("scene", &path).ok()?;
    Some(std::fs::read_to_string(real).unwrap_or_default())
}

/// What a save changed in its file, as a unified diff of changed lines (one line of
/// context), from `before` ([`scene_text`] before the save) and the file now: the pilot of agent run
/// 13 read the saved `.tscn` with `cat` after 5 tasks of 7 to see what landed.
pub(crate) fn saved_diff(
    state: &AppState,
    res: Option<&str>,
    before: Option<String>,
) -> Option<String> {
    let before = before?;
    let after = scene_text(state, res)?;
    Some(line_diff(&before, &after))
}

fn line_diff(before: &str, after: &str) -> String {
    if before == after {
        return "(the file did not change)".into();
    }
    let diff = similar::TextDiff::from_lines(before, after);
    let text = diff.unified_diff().context_radius(1).to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_DIFF_LINES {
        return text.trim_end().to_string();
    }
    format!(
        "{}\n… {} more lines",
        lines[..MAX_DIFF_LINES].join("\n"),
        lines.len() - MAX_DIFF_LINES
    )
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    /// A save's diff: the changed lines with one of context, a new file all added, an
    /// unchanged one said so, a long one cut with the count of the rest.
    #[test]
    fn a_saves_diff_shows_what_changed() {
        let d = line_diff("a\nb\nc\nd\n", "a\nb\nC\nd\n");
        assert!(d.contains("-c\n+C"), "{d}");
        assert!(!d.contains(" a\n"), "{d}");
        assert!(line_diff("", "x\n").contains("+x"));
        assert_eq!(line_diff("x\n", "x\n"), "(the file did not change)");
        let long: String = (0..100).map(|i| format!("{i}\n")).collect();
        let d = line_diff("", &long);
        assert!(d.ends_with("more lines"), "{d}");
        assert!(d.lines().count() <= super::MAX_DIFF_LINES + 1, "{d}");
    }
}
