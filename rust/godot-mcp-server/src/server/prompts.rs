//! MCP prompts: the project's worked workflows, which an agent or a user starts by
//! name (`prompts/list`, `prompts/get`).
//!
//! Each prompt is data: its arguments, the toolsets it needs beyond the default ones,
//! and its steps, each naming one tool. The text a client gets is rendered from that
//! data, so every tool it names is written as `` `tool` `` and every toolset as
//! `` `toolset` ``; the tests check each such name against the tool registry (a
//! renamed tool turns them red). Arguments are written as `` `name: value` ``.

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};

/// One argument of a prompt.
pub(crate) struct Arg {
    pub name: &'static str,
    pub description: &'static str,
    /// `None`: required. `Some(v)`: optional, `v` when absent.
    pub default: Option<&'static str>,
    /// A `res://` path.
    pub path: bool,
}

/// One step: the tool it calls and what to do with it. `{arg}` in `does` is the
/// argument's value.
pub(crate) struct Step {
    pub tool: &'static str,
    pub does: &'static str,
}

/// One workflow.
pub(crate) struct Workflow {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub args: &'static [Arg],
    /// Toolsets to enable with `manage_toolsets` first (the default ones are on).
    pub toolsets: &'static [&'static str],
    /// What the agent is asked for, before the steps.
    pub goal: &'static str,
    pub steps: &'static [Step],
    /// After the steps: how to finish and what to report.
    pub finish: &'static str,
}

const fn required(name: &'static str, description: &'static str, path: bool) -> Arg {
    Arg {
        name,
        description,
        default: None,
        path,
    }
}

const fn optional(
    name: &'static str,
    description: &'static str,
    default: &'static str,
    path: bool,
) -> Arg {
    Arg {
        name,
        description,
        default: Some(default),
        path,
    }
}

/// Said once in every prompt that edits through the editor.
const EDITOR_NOTE: &str = "Scene edits go through the live Godot editor with the godot-mcp add-on: if a call answers that no editor is connected, start one with `start_editor` (toolset `editor_process`). Every mutating tool takes `dry_run: true` to preview; run it for real once the preview says what you meant.";

/// Every workflow the server offers, in `prompts/list` order.
pub(crate) const WORKFLOWS: &[Workflow] = &[
    Workflow {
        name: "build_player_character",
        title: "Build a player character",
        description: "A player scene: a CharacterBody with a collision shape, a movement script, input actions, saved and parse-checked.",
        args: &[
            optional(
                "scene",
                "Where the player scene goes.",
                "res://player/player.tscn",
                true,
            ),
            optional("dim", "2d or 3d.", "2d", false),
        ],
        toolsets: &[
            "scene_files",
            "scene_edit",
            "physics",
            "script_edit",
            "input_map",
            "script_check",
        ],
        goal: "Build a playable {dim} player character in {scene}.",
        steps: &[
            Step {
                tool: "create_scene",
                does: "create {scene} with a Node root (`root_type: Node2D` for 2d, `root_type: Node3D` for 3d); it opens in the editor.",
            },
            Step {
                tool: "add_physics_body",
                does: "add the body under the root: `body: character`, `dim: {dim}`, a capsule shape (`shape: {kind: capsule, ...}` with its size), `name: Player`.",
            },
            Step {
                tool: "create_script",
                does: "create the movement script next to the scene (`extends CharacterBody2D` or `extends CharacterBody3D`): read the move_left, move_right, move_up, move_down and jump actions in _physics_process, set velocity, call move_and_slide().",
            },
            Step {
                tool: "attach_script",
                does: "attach that script to the Player node.",
            },
            Step {
                tool: "add_input_action",
                does: "add the actions the script reads (move_left, move_right, move_up, move_down, jump), each with its key events, unless `get_input_action` shows it exists.",
            },
            Step {
                tool: "save_scene",
                does: "save {scene}.",
            },
            Step {
                tool: "get_parse_errors",
                does: "check the new script with Godot's parser; fix any error with `patch_script` and check again.",
            },
            Step {
                tool: "get_scene_tree",
                does: "read {scene} back from disk and confirm the body, its collision shape and the script are there.",
            },
        ],
        finish: "Report the scene path, the node tree, the script path and the input actions you added.",
    },
    Workflow {
        name: "wire_hud",
        title: "Wire a HUD",
        description: "A HUD scene of Controls laid out with containers and anchors, its labels updated by a script through signals, registered as an autoload.",
        args: &[
            optional(
                "scene",
                "Where the HUD scene goes.",
                "res://ui/hud.tscn",
                true,
            ),
            optional(
                "values",
                "What the HUD shows, comma-separated.",
                "health, score",
                false,
            ),
        ],
        toolsets: &[
            "scene_files",
            "scene_edit",
            "ui",
            "script_edit",
            "settings",
            "script_check",
        ],
        goal: "Build a HUD in {scene} that shows: {values}.",
        steps: &[
            Step {
                tool: "create_scene",
                does: "create {scene} with `root_type: CanvasLayer` (`root_name: HUD`).",
            },
            Step {
                tool: "add_container",
                does: "add a MarginContainer under the root, then a VBoxContainer inside it.",
            },
            Step {
                tool: "set_anchors_preset",
                does: "anchor the MarginContainer to the top-left (`preset: top_left`) or the corner that fits.",
            },
            Step {
                tool: "create_node",
                does: "add one Label per value ({values}) inside the VBoxContainer, named after the value.",
            },
            Step {
                tool: "set_theme_override",
                does: "give the labels a readable font size (`kind: font_size`).",
            },
            Step {
                tool: "create_script",
                does: "create the HUD script (`extends CanvasLayer`) with one method per value that sets its Label's text, e.g. func set_health(value).",
            },
            Step {
                tool: "attach_script",
                does: "attach it to the HUD root.",
            },
            Step {
                tool: "connect_signal",
                does: "where a game node already emits the value's signal (for example health_changed), connect it to the HUD method; otherwise say which signal the game should emit.",
            },
            Step {
                tool: "save_scene",
                does: "save {scene}.",
            },
            Step {
                tool: "register_autoload",
                does: "register {scene} as an autoload named HUD so every level shows it.",
            },
            Step {
                tool: "get_parse_errors",
                does: "check the HUD script with Godot's parser.",
            },
        ],
        finish: "Report the HUD's node tree, its script's methods and the signals connected (or still needed).",
    },
    Workflow {
        name: "fix_parse_errors",
        title: "Fix every parse error",
        description: "Every GDScript file checked with Godot's own parser; each error fixed by a minimal patch against the text read, then checked again.",
        args: &[optional(
            "dir",
            "Only scripts under this folder.",
            "res://",
            true,
        )],
        toolsets: &["script_check", "script_edit"],
        goal: "Make every GDScript under {dir} parse with Godot's own parser.",
        steps: &[
            Step {
                tool: "list_scripts",
                does: "list every script (page with cursor until none is left); keep the .gd files under {dir}.",
            },
            Step {
                tool: "get_parse_errors",
                does: "check them all (their paths, in batches); each file with an error gives its first error's line and message.",
            },
            Step {
                tool: "scripts_read",
                does: "read each failing file: its text and its sha256.",
            },
            Step {
                tool: "patch_script",
                does: "fix the error with the smallest hunk, passing the sha256 you read (`expected_sha256: <sha256>`; a stale one is refused and nothing changes: read again).",
            },
            Step {
                tool: "get_parse_errors",
                does: "check the file again: Godot reports only the first error of a file, so repeat read, patch and check until it parses.",
            },
        ],
        finish: "Report each file you changed with the errors it had, and any file you could not fix and why.",
    },
    Workflow {
        name: "playtest_scene",
        title: "Playtest a scene and report",
        description: "Run a scene headless and read its errors, then play it with the runtime probe: input, the live tree, properties, a screenshot; stop it and report.",
        args: &[
            required("scene", "The scene to play.", true),
            optional(
                "inputs",
                "What to do in the game, in words.",
                "move around for a few seconds",
                false,
            ),
        ],
        toolsets: &["runtime", "game_inspect"],
        goal: "Playtest {scene} ({inputs}) and report what happens.",
        steps: &[
            Step {
                tool: "run_and_capture",
                does: "run {scene} headless for a bounded time first: its stdout, stderr and script errors (file, line, message).",
            },
            Step {
                tool: "play_scene",
                does: "play {scene} as a supervised session; keep its session_id.",
            },
            Step {
                tool: "get_game_scene_tree",
                does: "read the running game's live tree.",
            },
            Step {
                tool: "play_input_sequence",
                does: "play the input for: {inputs} (timed steps of events).",
            },
            Step {
                tool: "get_game_property",
                does: "read the properties that show the effect (a player's position, a score).",
            },
            Step {
                tool: "game_screenshot",
                does: "capture the viewport (a headless build cannot: then say so).",
            },
            Step {
                tool: "stop_scene",
                does: "stop the session; it reports how the game ended.",
            },
        ],
        finish: "Report the errors seen, what the input changed (values before and after), the screenshot if any, and how the game ended.",
    },
    Workflow {
        name: "move_files_safely",
        title: "Move files safely",
        description: "Move or rename a file with its sidecars, every res:// reference rewritten, previewed first and checked after.",
        args: &[
            required("path", "The file to move.", true),
            required("to", "Its new path.", true),
        ],
        toolsets: &["files", "analysis", "journal"],
        goal: "Move {path} to {to} without breaking any reference.",
        steps: &[
            Step {
                tool: "find_references",
                does: "list every reference to {path} (scenes, resources, scripts, project.godot), page by page.",
            },
            Step {
                tool: "move_file",
                does: "preview the move with `dry_run: true`: the files it would rewrite should match the references found; then move it for real.",
            },
            Step {
                tool: "find_references",
                does: "check that nothing refers to {path} any more and that {to} has the references.",
            },
            Step {
                tool: "check_scene_integrity",
                does: "check the scenes that referred to it still load their dependencies.",
            },
            Step {
                tool: "list_transactions",
                does: "read the move's transaction: committed, with its proof.",
            },
        ],
        finish: "Report the files rewritten and the transaction id; if anything is left pointing at {path}, say where.",
    },
    Workflow {
        name: "review_transactions",
        title: "Review the last transactions",
        description: "What changed the project lately: the journal's newest transactions, their state and proof, the write gate, the editor's undo history.",
        args: &[optional("limit", "How many transactions.", "10", false)],
        toolsets: &["journal"],
        goal: "Review the last {limit} transactions of this project.",
        steps: &[
            Step {
                tool: "list_transactions",
                does: "read the newest {limit} transactions (`limit: {limit}`): state, operation, path, proof, reason, and the write gate.",
            },
            Step {
                tool: "editor_history",
                does: "read the edited scene's undo history, for edits made through the editor.",
            },
        ],
        finish: "Summarize what changed and by which operation; name every transaction that is not committed (open, compensated, quarantined) with its reason, and say whether the write gate is open. The resource godot-mcp://transactions holds the same list.",
    },
];

/// The workflow named `name`.
pub(crate) fn find(name: &str) -> Option<&'static Workflow> {
    WORKFLOWS.iter().find(|w| w.name == name)
}

impl Workflow {
    /// Its `prompts/list` entry.
    pub(crate) fn to_prompt(&self) -> Prompt {
        let args = self
            .args
            .iter()
            .map(|a| {
                let description = match a.default {
                    Some(d) => format!("{} Default: {d}.", a.description),
                    None => a.description.to_owned(),
                };
                PromptArgument::new(a.name)
                    .with_description(description)
                    .with_required(a.default.is_none())
            })
            .collect();
        Prompt::new(self.name, Some(self.description), Some(args)).with_title(self.title)
    }

    /// The prompt's text with `values` in place of its arguments.
    pub(crate) fn render(&self, values: &[(&str, String)]) -> String {
        let fill = |text: &str| {
            values.iter().fold(text.to_owned(), |t, (name, value)| {
                t.replace(&format!("{{{name}}}"), value)
            })
        };
        let mut text = fill(self.goal);
        text.push_str("\n\n");
        if !self.toolsets.is_empty() {
            let sets: Vec<String> = self.toolsets.iter().map(|t| format!("`{t}`")).collect();
            text.push_str(&format!(
                "First enable the toolsets this needs with `manage_toolsets` (enable: {}); `list_toolsets` shows them.\n\n",
                sets.join(", ")
            ));
        }
        if self.toolsets.iter().any(|t| EDITOR_TOOLSETS.contains(t)) {
            text.push_str(EDITOR_NOTE);
            text.push_str("\n\n");
        }
        for (i, step) in self.steps.iter().enumerate() {
            text.push_str(&format!(
                "{}. `{}`: {}\n",
                i + 1,
                step.tool,
                fill(step.does)
            ));
        }
        text.push('\n');
        text.push_str(&fill(self.finish));
        text
    }

    /// `prompts/get`: the arguments checked, the text rendered.
    pub(crate) fn get(
        &self,
        arguments: Option<&Map<String, Value>>,
    ) -> Result<GetPromptResult, String> {
        let given = arguments.cloned().unwrap_or_default();
        if let Some(unknown) = given
            .keys()
            .find(|k| !self.args.iter().any(|a| a.name == k.as_str()))
        {
            return Err(format!(
                "prompt {} has no argument {unknown}; its arguments: {}",
                self.name,
                self.arg_names()
            ));
        }
        let mut values = Vec::new();
        for a in self.args {
            let value = match given.get(a.name) {
                Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
                Some(other) if !other.is_string() => {
                    return Err(format!("argument {} must be a string", a.name));
                }
                _ => match a.default {
                    Some(d) => d.to_owned(),
                    None => {
                        return Err(format!(
                            "prompt {} needs the argument {}: {}",
                            self.name, a.name, a.description
                        ));
                    }
                },
            };
            if a.path && !value.starts_with("res://") {
                return Err(format!(
                    "argument {} is a project path: write it as res://{}",
                    a.name,
                    value.trim_start_matches('/')
                ));
            }
            values.push((a.name, value));
        }
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            self.render(&values),
        )])
        .with_description(self.description))
    }

    fn arg_names(&self) -> String {
        self.args
            .iter()
            .map(|a| a.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Toolsets whose tools act through the live editor.
const EDITOR_TOOLSETS: &[&str] = &["scene_files", "scene_edit", "physics", "ui"];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Every `` `word` `` of a rendered prompt that is a bare snake_case name.
    fn named(text: &str) -> BTreeSet<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| {
                !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            })
            .map(str::to_owned)
            .collect()
    }

    fn rendered(w: &Workflow) -> String {
        let values: Vec<(&str, String)> = w
            .args
            .iter()
            .map(|a| (a.name, a.default.unwrap_or("res://x.tscn").to_owned()))
            .collect();
        w.render(&values)
    }

    /// Every name a prompt's text gives as a tool or toolset is one in the registry,
    /// and each step's tool belongs to a toolset the prompt enables (or a default one).
    #[test]
    fn every_tool_and_toolset_a_prompt_names_exists() {
        let registry = crate::tools::Registry::builtin();
        let toolsets: BTreeSet<String> = registry
            .iter()
            .map(|d| d.meta.toolset.as_str().to_owned())
            .collect();
        for w in WORKFLOWS {
            let text = rendered(w);
            for name in named(&text) {
                assert!(
                    registry.get(&name).is_some() || toolsets.contains(&name),
                    "prompt {} names `{name}`, which is no tool or toolset:\n{text}",
                    w.name
                );
            }
            for t in w.toolsets {
                assert!(toolsets.contains(*t), "prompt {}: no toolset {t}", w.name);
            }
            for step in w.steps {
                let def = registry
                    .get(step.tool)
                    .unwrap_or_else(|| panic!("prompt {}: no tool {}", w.name, step.tool));
                let set = def.meta.toolset;
                assert!(
                    crate::rules::Toolset::DEFAULT.contains(&set)
                        || w.toolsets.contains(&set.as_str()),
                    "prompt {}: {} is in toolset {}, which it does not enable",
                    w.name,
                    step.tool,
                    set.as_str()
                );
            }
        }
    }

    /// A required argument left out, an unknown one, or a path not under res:// is an
    /// error that says what to send; defaults fill the rest.
    #[test]
    fn prompt_arguments_are_checked() {
        let w = find("move_files_safely").unwrap();
        let err = w.get(None).unwrap_err();
        assert!(err.contains("needs the argument path"), "{err}");
        let args = |v: Value| v.as_object().cloned();
        let err = w
            .get(args(serde_json::json!({"path": "res://a.gd", "to": "b.gd"})).as_ref())
            .unwrap_err();
        assert!(err.contains("res://b.gd"), "{err}");
        let err = w
            .get(
                args(serde_json::json!({"path": "res://a.gd", "to": "res://b.gd", "x": "1"}))
                    .as_ref(),
            )
            .unwrap_err();
        assert!(err.contains("no argument x"), "{err}");
        let ok = w
            .get(args(serde_json::json!({"path": "res://a.gd", "to": "res://b/a.gd"})).as_ref())
            .unwrap();
        let text = serde_json::to_string(&ok.messages).unwrap();
        assert!(text.contains("Move res://a.gd to res://b/a.gd"), "{text}");
        assert!(!text.contains("{path}") && !text.contains("{to}"), "{text}");
        let review = find("review_transactions").unwrap().get(None).unwrap();
        let text = serde_json::to_string(&review.messages).unwrap();
        assert!(text.contains("last 10 transactions"), "{text}");
    }
}
