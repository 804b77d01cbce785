//! Organizing project files: move (with every reference rewritten), duplicate,
//! create and delete folders, and find resources by type.
//!
//! Every byte written or deleted goes through the one write seam
//! (`planes::project`). A move is several files (the file, its sidecars, every
//! file that names it), so it plans all of them first and applies them as one
//! journaled change: all of them land or none does — should one fail midway,
//! every file is put back before the answer, which says so; after a crash,
//! reconciliation does the same.
//! Folders are not files: creating or removing an empty one is a plain `mkdir` /
//! `rmdir` inside the project (containment-checked), which the result says is not
//! journaled.

mod by_type;
mod folders;
mod moves;

use crate::tools::ToolDef;

/// The organizing tools, in their published order.
pub(crate) fn tools() -> Vec<ToolDef> {
    let mut tools = moves::tools();
    tools.extend(folders::tools());
    tools.extend(by_type::tools());
    tools
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use serde_json::json;

    use super::by_type::{binary_type, text_type};
    use super::moves::{Op, Step, apply_steps};
    use crate::error::ErrorCode;
    use crate::planes::project::JournalCall;
    use crate::respath::ResPath;
    use crate::rules::Toolset;
    use crate::state::AppState;

    fn project() -> (tempfile::TempDir, AppState) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
        let state = AppState::for_tests(dir.path());
        (dir, state)
    }

    fn write(path: &str, bytes: &[u8]) -> Step {
        Step {
            path: ResPath::parse(path).unwrap(),
            op: Op::Write {
                bytes: bytes.to_vec(),
                before: None,
            },
        }
    }

    /// A change whose files cannot all exist (one is the folder of another) is
    /// refused before anything is written; a path the seam refuses likewise.
    #[test]
    fn a_change_that_cannot_be_whole_writes_nothing() {
        let (dir, state) = project();
        let steps = [
            write("res://x/a.gd", b"one"),
            write("res://x", b"two"),
            write("res://c.gd", b"three"),
        ];
        let call = &mut JournalCall::new("files", "move_file");
        let e = apply_steps(&state, call, "from", &steps).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams, "{}", e.message);
        assert!(e.message.contains("nothing was written"), "{}", e.message);
        assert!(!dir.path().join("x").exists());
        assert!(!dir.path().join("c.gd").exists());

        let e = apply_steps(
            &state,
            call,
            "from",
            &[write("res://d.gd", b"4"), write("res://c.gd/..x", b"")],
        );
        assert!(e.is_err());
        assert!(!dir.path().join("d.gd").exists());
    }

    /// Guards against (issue 28): two agents creating the same file, the last writer
    /// silently winning. `expected_sha256: null` says "must not exist": the first
    /// create lands, the second answers STALE and leaves the first's bytes.
    #[tokio::test]
    async fn two_creates_of_one_file_cannot_both_succeed() {
        let (dir, state) = project();
        let state = Arc::new(state);
        let args = |text: &str| json!({"path": "res://a.gd", "content": text, "expected_sha256": null, "confirm": true});
        let state = crate::safety::Served::new(state, crate::tools::builtin_for_tests());
        let call = crate::safety::pipeline::call_detached;
        call(&state, "write_script", args("extends Node # first\n"))
            .await
            .unwrap();
        let second = call(&state, "write_script", args("extends Node # second\n"))
            .await
            .unwrap_err();
        assert_eq!(second.code, ErrorCode::Stale, "{}", second.message);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.gd")).unwrap(),
            "extends Node # first\n"
        );
        // Left out, the field still means "whatever is there".
        let mut any = args("extends Node # third\n");
        any.as_object_mut().unwrap().remove("expected_sha256");
        call(&state, "write_script", any).await.unwrap();
    }

    /// Real storage whose first unlink of a project file (not a temp) fails, once.
    pub(crate) struct FirstUnlinkFails(pub(crate) std::sync::atomic::AtomicBool);

    impl godot_mcp_journal::storage::Storage for FirstUnlinkFails {
        fn create_temp(
            &self,
            path: &Path,
            bytes: &[u8],
            mode: u32,
        ) -> std::io::Result<std::fs::File> {
            godot_mcp_journal::storage::RealStorage.create_temp(path, bytes, mode)
        }
        fn sync_file(&self, path: &Path, file: &std::fs::File) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.sync_file(path, file)
        }
        fn sync_data(&self, path: &Path, file: &std::fs::File) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.sync_data(path, file)
        }
        fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.rename(from, to)
        }
        fn rename_noreplace(&self, from: &Path, to: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.rename_noreplace(from, to)
        }
        fn exchange(&self, a: &Path, b: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.exchange(a, b)
        }
        fn remove_file(&self, path: &Path) -> std::io::Result<()> {
            let temp = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".gmcp-"));
            if !temp && self.0.swap(false, std::sync::atomic::Ordering::SeqCst) {
                return Err(std::io::Error::other("injected unlink failure"));
            }
            godot_mcp_journal::storage::RealStorage.remove_file(path)
        }
        fn create_dir(&self, path: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.create_dir(path)
        }
        fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.sync_dir(dir)
        }
    }

    /// Guards against (issue 28): the idempotency key riding on a move's first file
    /// only. The move stops midway (the delete of the old file fails after the new
    /// file, its .uid and the rewritten scene landed); a retry with the same key then
    /// replayed `{"status":"committed"}` and did nothing while the old file was still
    /// there. Now the failure puts every file back before the answer, which says so,
    /// and the retry reports that compensated change: never a bare "committed" with
    /// the move half done.
    #[tokio::test]
    async fn a_retry_after_a_move_stopped_midway_is_never_a_bare_committed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("project.godot"), "config_version=5\n").unwrap();
        std::fs::create_dir_all(root.join("enemies")).unwrap();
        std::fs::write(
            root.join("enemies/enemy.tscn"),
            "[gd_scene format=3 uid=\"uid://cold1\"]\n\n[node name=\"E\" type=\"Node2D\"]\n",
        )
        .unwrap();
        std::fs::write(root.join("enemies/enemy.tscn.uid"), "uid://cold1\n").unwrap();
        std::fs::write(
            root.join("main.tscn"),
            "[gd_scene format=3]\n\n[ext_resource type=\"PackedScene\" path=\"res://enemies/enemy.tscn\" id=\"1\"]\n",
        )
        .unwrap();
        let before = std::fs::read(root.join("main.tscn")).unwrap();
        let p = crate::project_root::Project::discover(Some(root), Path::new("/")).unwrap();
        let storage = std::sync::Arc::new(FirstUnlinkFails(true.into()));
        let mut journal =
            godot_mcp_journal::Journal::open_with_storage(&root.join(".state"), p.root(), storage)
                .unwrap();
        journal.reconcile().unwrap();
        let safety = crate::rules::SafetyState::new(
            crate::rules::ApprovalConfig::default(),
            Toolset::ALL.into_iter().collect(),
        );
        let state = Arc::new(AppState::new(p, journal, safety));
        let state = crate::safety::Served::new(state, crate::tools::builtin_for_tests());
        let args = json!({
            "from": "res://enemies/enemy.tscn", "to": "res://actors/enemy.tscn",
            "confirm": true, "idempotency_key": "move-1",
        });
        let call = crate::safety::pipeline::call_detached;
        let failed = call(&state, "move_file", args.clone()).await.unwrap_err();
        assert!(
            failed.message.contains("every file was put back"),
            "{}",
            failed.message
        );
        let retry = call(&state, "move_file", args).await.unwrap();
        let old_there = root.join("enemies/enemy.tscn").exists();
        assert!(
            retry["status"] != "committed" || !old_there,
            "replayed committed with the old file still there: {retry}"
        );
        assert_eq!(retry["status"], "compensated", "{retry}");
        assert!(old_there && root.join("enemies/enemy.tscn.uid").exists());
        assert!(!root.join("actors/enemy.tscn").exists());
        assert!(!root.join("actors/enemy.tscn.uid").exists());
        assert_eq!(std::fs::read(root.join("main.tscn")).unwrap(), before);
    }

    #[test]
    fn headers_give_the_type() {
        let t = text_type("[gd_resource type=\"Resource\" script_class=\"PlayerStats\" load_steps=2 format=3 uid=\"uid://b\"]\n").unwrap();
        assert_eq!(t.type_name, "Resource");
        assert_eq!(t.script_class.as_deref(), Some("PlayerStats"));
        let s = text_type("[gd_scene format=3]\n\n[node name=\"M\" type=\"Node3D\"]\n").unwrap();
        assert_eq!(s.type_name, "PackedScene");
        assert_eq!(s.root_type.as_deref(), Some("Node3D"));
        assert!(text_type("extends Node\n").is_none());
    }

    #[test]
    fn binary_header_gives_the_class() {
        // Saved by Godot 4.4.1: `ResourceSaver.save(Curve.new(), "res://curve.res")`.
        let real = include_bytes!("../../../../../tests/fixtures/files/curve.res");
        assert_eq!(binary_type(real).as_deref(), Some("Curve"));
        assert_eq!(binary_type(&real[..20]), None);
        assert_eq!(binary_type(b"GDSC"), None);
    }
}
