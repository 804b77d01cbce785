//! `GodotMcpEditorPlugin`: the add-on's presence in the editor.
//!
//! Godot adds it to the editor as soon as the library loads (GDExtension editor plugins are
//! not governed by the Project Settings → Plugins toggle). It owns the executor and turns
//! it on and off as the [`switch`](crate::switch) says: on, it starts the bridge thread
//! ([`BridgeClient`]) and drains its requests once a frame in `process()`; off, the thread
//! is stopped and joined and the socket closed, so while disabled there is no socket and
//! nothing executes. Each request is decoded once and dispatched here (`execute`) to its
//! domain's executor, `exec/<domain>.rs`.
//!
//! It also owns the "Godot MCP" dock ([`Dock`]): added when the plugin enters the tree,
//! refreshed once a frame from the bridge thread's [`Feed`] (a no-op unless it changed),
//! removed when the plugin leaves.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use godot::classes::{EditorPlugin, IEditorPlugin, Os, ProjectSettings};
use godot::prelude::*;
use godot_mcp_editor_core::client::BridgeClient;
use godot_mcp_editor_core::command::Command;
use godot_mcp_editor_core::decode;
use godot_mcp_editor_core::dock::{DockContext, Feed, Link, ServerBinary};
use godot_mcp_editor_core::pace::{BUSY_SLEEP_USEC, Pace, PaceAction};
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect, Outcome, Reply};
use serde_json::json;

use crate::dock::Dock;
use crate::startup::Startup;
use crate::{ADDON_VERSION, docs_settle, engine_version, exec, switch};

/// Most time one frame spends executing requests; the rest wait for the next frame, so
/// the editor stays responsive under a burst.
const FRAME_BUDGET: Duration = Duration::from_millis(50);

#[derive(GodotClass)]
#[class(tool, init, base = EditorPlugin)]
pub(crate) struct GodotMcpEditorPlugin {
    /// Whether the executor runs. Off by default; follows the switch once a frame while the
    /// plugin is in the tree, and is forced off when it leaves.
    enabled: bool,
    /// The bridge thread while enabled.
    client: Option<BridgeClient>,
    /// Shortens the editor's frame sleep while requests flow (see `pace`).
    pace: Pace,
    /// Whether the first frame's line (the executor's state once start-up is over) was
    /// printed.
    announced: bool,
    /// What the bridge thread reports for the dock; lives as long as the plugin, so its
    /// version only grows across executor restarts.
    feed: Arc<Feed>,
    /// The dock while the plugin is in the tree.
    dock: Option<Dock>,
    /// Whether the editor's start-up is over (set when the plugin enters the tree):
    /// until then requests wait, queued (see `startup`).
    startup: Option<Startup>,
    base: Base<EditorPlugin>,
}

#[godot_api]
impl IEditorPlugin for GodotMcpEditorPlugin {
    fn enter_tree(&mut self) {
        godot_print!(
            "godot-mcp: editor plugin entered the tree (add-on {ADDON_VERSION}, Godot {})",
            engine_version::get()
        );
        let loaded_late = docs_settle::loaded_late();
        if let Some(waited) = docs_settle::settle() {
            godot_print!(
                "godot-mcp: loaded by a running editor; waited {} ms for its class reference (godotengine/godot#111048)",
                waited.as_millis()
            );
        }
        self.startup = Some(Startup::begin(loaded_late));
        // The GDScript plugin may have flipped the switch before we existed.
        self.apply_switch(switch::requested());
        let ctx = dock_context();
        godot_print!("godot-mcp: {}", ctx.server.describe());
        // Through `base_mut()`, so the editor may call back into this plugin meanwhile.
        let dock = Dock::new(&mut self.base_mut(), ctx);
        self.dock = Some(dock);
    }

    fn exit_tree(&mut self) {
        self.apply_switch(false);
        if let Some(dock) = self.dock.take() {
            dock.remove(&mut self.base_mut());
        }
        godot_print!("godot-mcp: editor plugin left the tree");
    }

    fn process(&mut self, _delta: f64) {
        self.apply_switch(switch::requested());
        if !self.announced {
            // `process()` starts once start-up is over, after Project Settings' plugins
            // entered the tree: this line is the positive signal that the executor's
            // state is settled (a test waits for it before asserting that a disabled
            // add-on made no connection).
            self.announced = true;
            godot_print!(
                "godot-mcp: editor up; executor {}; {}",
                if self.enabled { "on" } else { "off" },
                if self.client.is_some() {
                    "bridge thread running"
                } else {
                    "no bridge thread"
                }
            );
        }
        if self.startup.as_mut().is_none_or(Startup::settled) {
            self.drain();
        }
        if let Some(dock) = &mut self.dock {
            dock.refresh(&self.feed);
        }
    }
}

/// The add-on's facts for the dock: its version, this project's folder and the server
/// the client set-up names (the bundled one, or `godot-mcp` from PATH).
fn dock_context() -> DockContext {
    let root = ProjectSettings::singleton()
        .globalize_path("res://")
        .to_string();
    let root = std::path::PathBuf::from(root.trim_end_matches(['/', '\\']));
    // Canonical, as `setup-client` writes it (no symlinked or relative parts).
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let mut project_root = root.display().to_string();
    // Windows' canonical form is verbatim (\\?\C:\...), which clients do not expect.
    if let Some(rest) = project_root.strip_prefix(r"\\?\") {
        project_root = rest.to_owned();
    }
    DockContext {
        addon_version: ADDON_VERSION.into(),
        server: ServerBinary::find(&root),
        project_root,
    }
}

impl GodotMcpEditorPlugin {
    /// Starts or stops the executor when `enabled` differs from its state; a no-op otherwise,
    /// so calling it every frame costs one comparison.
    fn apply_switch(&mut self, enabled: bool) {
        if self.enabled == enabled {
            return;
        }
        self.enabled = enabled;
        if enabled {
            let root = ProjectSettings::singleton()
                .globalize_path("res://")
                .to_string();
            match BridgeClient::start(
                root.into(),
                ADDON_VERSION.into(),
                engine_version::get().clone(),
                self.feed.clone(),
            ) {
                Ok(c) => self.client = Some(c),
                Err(e) => godot_error!("godot-mcp: cannot start the bridge thread: {e}"),
            }
            godot_print!("godot-mcp: executor enabled");
        } else {
            // Dropping joins the thread and closes the socket.
            self.client = None;
            self.feed.update(|f| {
                f.link = Link::Off;
                f.status = None;
            });
            if let Some(usec) = self.pace.stop() {
                Os::singleton().set_low_processor_usage_mode_sleep_usec(usec);
            }
            godot_print!("godot-mcp: executor disabled");
        }
    }

    /// Execute the requests that arrived since the last frame, on the main thread.
    fn drain(&mut self) {
        let Some(client) = &self.client else { return };
        let start = Instant::now();
        let mut handled = 0usize;
        // While requests flow the editor does not sleep between frames; the wait for
        // the next request is here, where its arrival ends it (see `pace`).
        let mut wait = self.pace.wait();
        while start.elapsed() < FRAME_BUDGET {
            let next = match wait.take() {
                Some(d) => client.recv_timeout(d),
                None => client.try_recv(),
            };
            let Some(incoming) = next else {
                break;
            };
            let req = &incoming.request;
            let outcome = if incoming.received.elapsed() > Duration::from_millis(req.timeout_ms) {
                // The server has given up on it; running it now would be an effect nobody
                // is waiting for.
                Err(BridgeError::new(
                    ErrorCode::Timeout,
                    "the request waited longer than its timeout; not run",
                )
                .with_effect(ErrorEffect::Unchanged))
            } else {
                match decode::decode(&req.cmd, &req.params) {
                    // Carries `effect: unchanged`: it never ran.
                    Err(e) => Err(e),
                    Ok(cmd) => match catch_unwind(AssertUnwindSafe(|| execute(cmd))) {
                        Ok(r) => r,
                        Err(_) => {
                            godot_error!("godot-mcp: the executor panicked on {}", req.cmd);
                            // No `effect`: a panic may have stopped it half-way.
                            Err(BridgeError::new(
                                ErrorCode::Internal,
                                format!(
                                    "the add-on failed executing {}; see the editor log",
                                    req.cmd
                                ),
                            ))
                        }
                    },
                }
            };
            let reply = Reply {
                id: req.id,
                outcome: match outcome {
                    Ok(v) => Outcome::Ok(v),
                    Err(e) => Outcome::Error(e),
                },
            };
            client.reply(incoming.generation, &reply);
            handled += 1;
        }
        let mut os = Os::singleton();
        match self
            .pace
            .on_frame(start, handled, os.get_low_processor_usage_mode_sleep_usec())
        {
            PaceAction::Keep => {}
            PaceAction::Quicken => os.set_low_processor_usage_mode_sleep_usec(BUSY_SLEEP_USEC),
            PaceAction::Restore(usec) => os.set_low_processor_usage_mode_sleep_usec(usec),
        }
    }
}

/// One decoded command, run by its domain's executor (`exec/<domain>.rs`): the one
/// dispatch.
fn execute(cmd: Command) -> exec::Res {
    match cmd {
        Command::Ping => Ok(json!({})),
        c @ (Command::EditorState
        | Command::SceneTree(..)
        | Command::SceneOpen(..)
        | Command::SceneCreate(..)
        | Command::SceneSave(..)
        | Command::SceneReload(..)
        | Command::SceneClose(..)
        | Command::NodeInstance { .. }
        | Command::EditableChildren { .. }
        | Command::Connections { .. }
        | Command::Properties { .. }) => exec::scene::run(c),
        c @ (Command::NodeCreate(..)
        | Command::NodeRename(..)
        | Command::NodeMove(..)
        | Command::NodeDuplicate(..)
        | Command::NodeDelete(..)
        | Command::NodeGetProperty(..)
        | Command::NodeSetProperty(..)
        | Command::NodePersistence(..)) => exec::node::run(c),
        c @ (Command::ScriptAttach(..) | Command::ScriptDetach(..)) => exec::script::run(c),
        c @ (Command::SignalConnect(..) | Command::SignalDisconnect(..)) => exec::signal::run(c),
        c @ Command::ResourceSetProperty(..) => exec::resource::run(c),
        c @ Command::BatchApply(..) => exec::batch::run(c),
        c @ (Command::Undo { .. } | Command::Redo | Command::History(..)) => exec::history::run(c),
        Command::EditorScreenshot(req) => crate::capture::editor_screenshot(req),
        c @ Command::Steps { .. } => exec::steps::run(c),
        c @ (Command::Cells(..) | Command::MeshLibraryItems(..)) => exec::tilemap::run(c),
        c @ (Command::NodeGroup { .. }
        | Command::Select { .. }
        | Command::Selection
        | Command::SaveAll) => exec::editor::run(c),
        c @ (Command::AnimationAdd { .. }
        | Command::AnimationSet { .. }
        | Command::AnimationRemove { .. }
        | Command::AnimationGet { .. }
        | Command::TrackAdd { .. }
        | Command::TrackRemove { .. }
        | Command::KeyInsert { .. }
        | Command::KeyRemove { .. }) => exec::animation::run(c),
        c @ (Command::TreeAddNode { .. }
        | Command::TreeConnect { .. }
        | Command::TreeBlendConnect { .. }) => exec::animation_tree::run(c),
        c @ (Command::ThemeSetItem { .. }
        | Command::ThemeOverride { .. }
        | Command::AnchorsPreset { .. }
        | Command::AddContainer { .. }) => exec::ui::run(c),
        Command::EditorMonitors
        | Command::FilesystemScan
        | Command::FilesystemStatus
        | Command::FilesystemUpdate(..) => exec::files::run(&cmd),
        c @ Command::AudioAddPlayer(..) => exec::audio::run(c),
        c @ (Command::ShaderAssignMaterial(..)
        | Command::ShaderUniforms(..)
        | Command::ShaderSetUniform(..)) => exec::shader::run(c),
    }
}
