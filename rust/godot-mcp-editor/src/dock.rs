//! The "Godot MCP" editor dock: connection, write gate, recent agent actions and the
//! "Connect a client" panel, built from Godot's own Controls (no scene, no GDScript).
//!
//! Every text comes from `godot_mcp_editor_core::dock::view` (tested there); this module
//! only builds the nodes and copies the texts in. The plugin calls [`Dock::refresh`] once a
//! frame: it compares the feed's version with the one last shown and returns at once when
//! they are equal, so an idle editor pays one atomic load per frame and allocates nothing.
//!
//! With `GODOT_MCP_DOCK_DUMP=1` in the editor's environment each refresh prints
//! `godot-mcp: dock: {json}`: the texts read back from the Label nodes themselves, which
//! the real-editor test reads.

use godot::classes::control::SizeFlags;
use godot::classes::editor_plugin::DockSlot;
use godot::classes::scroll_container::ScrollMode;
use godot::classes::text_server::AutowrapMode;
use godot::classes::{
    Button, Control, DisplayServer, EditorPlugin, HSeparator, Label, ScrollContainer, VBoxContainer,
};
use godot::prelude::*;
use godot_mcp_editor_core::dock::{DockContext, DockView, Feed, setup_outcome, view};

/// The alarm colour of a label (the editor theme's error red is not reachable from
/// here without an editor theme lookup per update; this is close to it).
const ALARM: Color = Color::from_rgb(1.0, 0.42, 0.38);

/// The nodes of one client's set-up.
struct SnippetNodes {
    heading: Gd<Label>,
    text: Gd<Label>,
    /// The `setup-client` line the button runs.
    setup: Gd<Label>,
    /// What the last run said.
    result: Gd<Label>,
}

/// The dock's nodes.
pub(crate) struct Dock {
    root: Gd<ScrollContainer>,
    connection: Gd<Label>,
    server: Gd<Label>,
    gate: Gd<Label>,
    repair: Gd<Label>,
    repair_copy: Gd<Button>,
    actions: Gd<Label>,
    /// Each client's snippet labels.
    snippets: Vec<SnippetNodes>,
    ctx: DockContext,
    /// The feed version last shown; `None` before the first refresh.
    shown: Option<u64>,
    dump: bool,
}

fn label(parent: &mut Gd<VBoxContainer>, name: &str) -> Gd<Label> {
    let mut l = Label::new_alloc();
    l.set_name(name);
    l.set_autowrap_mode(AutowrapMode::WORD_SMART);
    l.set_h_size_flags(SizeFlags::EXPAND_FILL);
    parent.add_child(&l);
    l
}

fn heading(parent: &mut Gd<VBoxContainer>, text: &str) {
    parent.add_child(&HSeparator::new_alloc());
    let mut l = Label::new_alloc();
    l.set_text(text);
    parent.add_child(&l);
}

/// A button that copies the text of `source` (read when pressed) to the clipboard.
fn copy_button(
    parent: &mut Gd<VBoxContainer>,
    name: &str,
    text: &str,
    source: &Gd<Label>,
) -> Gd<Button> {
    let mut b = Button::new_alloc();
    b.set_name(name);
    b.set_text(text);
    let source = source.clone();
    b.signals().pressed().connect(move || {
        DisplayServer::singleton().clipboard_set(&source.get_text());
    });
    parent.add_child(&b);
    b
}

/// A button that runs `godot-mcp setup-client` for one client and shows what it said.
/// It runs on the main thread: the command edits one small file and returns.
fn setup_button(
    parent: &mut Gd<VBoxContainer>,
    i: usize,
    title: &str,
    (program, args): (String, Vec<String>),
    result: &Gd<Label>,
) {
    let mut b = Button::new_alloc();
    b.set_name(&format!("Setup{i}Run"));
    b.set_text(&format!(
        "Write it into {title}'s config (merges, keeps other servers, backs up)"
    ));
    let mut result = result.clone();
    b.signals().pressed().connect(move || {
        let ran = std::process::Command::new(&program)
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output();
        let text = setup_outcome(match &ran {
            Ok(o) => Ok((o.status.success(), &o.stdout, &o.stderr)),
            Err(e) => Err(format!("{program}: {e}")),
        });
        result.set_text(&text);
    });
    parent.add_child(&b);
}

impl Dock {
    /// Build the dock and add it to the editor's right dock.
    pub(crate) fn new(plugin: &mut Gd<EditorPlugin>, ctx: DockContext) -> Self {
        let mut root = ScrollContainer::new_alloc();
        root.set_name("Godot MCP");
        root.set_horizontal_scroll_mode(ScrollMode::DISABLED);
        root.set_custom_minimum_size(Vector2::new(0.0, 200.0));
        let mut col = VBoxContainer::new_alloc();
        col.set_name("Column");
        col.set_h_size_flags(SizeFlags::EXPAND_FILL);
        root.add_child(&col);

        let connection = label(&mut col, "Connection");
        let server = label(&mut col, "Server");
        heading(&mut col, "Write gate");
        let gate = label(&mut col, "Gate");
        let repair = label(&mut col, "Repair");
        let repair_copy = copy_button(
            &mut col,
            "CopyRepair",
            "Copy the repair command (stop the server first; the proof file: docs/recovery.md)",
            &repair,
        );
        heading(
            &mut col,
            "Recent agent actions (status, tool, class, undoable, transaction)",
        );
        let actions = label(&mut col, "Actions");
        heading(&mut col, "Connect a client");
        let mut snippets = Vec::new();
        // The set-up lines depend only on `ctx`: computed once, here, for the buttons.
        let fixed = view(&Default::default(), &ctx).snippets;
        for (i, s) in fixed.into_iter().enumerate() {
            let heading = label(&mut col, &format!("SnippetHeading{i}"));
            let text = label(&mut col, &format!("Snippet{i}"));
            copy_button(
                &mut col,
                &format!("Copy{i}"),
                &format!("Copy for {}", s.client.title()),
                &text,
            );
            let setup = label(&mut col, &format!("Setup{i}"));
            let result = label(&mut col, &format!("SetupResult{i}"));
            setup_button(&mut col, i, s.client.title(), s.setup_argv, &result);
            snippets.push(SnippetNodes {
                heading,
                text,
                setup,
                result,
            });
        }
        plugin.add_control_to_dock(DockSlot::RIGHT_UL, &root.clone().upcast::<Control>());
        Dock {
            root,
            connection,
            server,
            gate,
            repair,
            repair_copy,
            actions,
            snippets,
            ctx,
            shown: None,
            dump: std::env::var("GODOT_MCP_DOCK_DUMP").is_ok_and(|v| v == "1"),
        }
    }

    /// Show the feed if it changed since the last call; otherwise one atomic load.
    pub(crate) fn refresh(&mut self, feed: &Feed) {
        let version = feed.version();
        if self.shown == Some(version) {
            return;
        }
        self.shown = Some(version);
        let v = view(&feed.get(), &self.ctx);
        self.show(&v);
        if self.dump {
            godot_print!("godot-mcp: dock: {}", self.read_back());
        }
    }

    fn show(&mut self, v: &DockView) {
        set(&mut self.connection, &v.connection, v.connection_alarm);
        set(&mut self.server, &v.server, false);
        set(&mut self.gate, &v.gate, v.gate_alarm);
        set(&mut self.repair, &v.repair, false);
        self.repair.set_visible(!v.repair.is_empty());
        self.repair_copy.set_visible(!v.repair.is_empty());
        let actions = if v.actions.is_empty() {
            "No journaled agent actions yet".to_owned()
        } else {
            v.actions.join("\n")
        };
        set(&mut self.actions, &actions, false);
        for (nodes, s) in self.snippets.iter_mut().zip(&v.snippets) {
            set(&mut nodes.heading, &s.heading, false);
            set(&mut nodes.text, &s.text, false);
            set(&mut nodes.setup, &s.setup, false);
        }
    }

    /// The labels' texts as Godot holds them.
    fn read_back(&self) -> String {
        let t = |l: &Gd<Label>| l.get_text().to_string();
        serde_json::json!({
            "connection": t(&self.connection),
            "server": t(&self.server),
            "gate": t(&self.gate),
            "repair": t(&self.repair),
            "actions": t(&self.actions),
            "snippets": self.snippets.iter().map(|n| serde_json::json!({
                "heading": t(&n.heading),
                "text": t(&n.text),
                "setup": t(&n.setup),
                "result": t(&n.result),
            })).collect::<Vec<_>>(),
        })
        .to_string()
    }

    /// Take the dock out of the editor and free it.
    pub(crate) fn remove(mut self, plugin: &mut Gd<EditorPlugin>) {
        plugin.remove_control_from_docks(&self.root.clone().upcast::<Control>());
        self.root.queue_free();
    }
}

/// Set a label's text (only when it differs) and its alarm colour.
fn set(label: &mut Gd<Label>, text: &str, alarm: bool) {
    if label.get_text() != text {
        label.set_text(text);
    }
    if alarm {
        label.add_theme_color_override("font_color", ALARM);
    } else {
        label.remove_theme_color_override("font_color");
    }
}
