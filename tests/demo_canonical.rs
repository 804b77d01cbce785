//! The demo project `godot_project/` is Godot-canonical: opening it in a real Godot 4.4
//! editor and saving every scene and resource changes no byte and adds no file.
//!
//! A hand-written file is not canonical: a uid that the import does not produce, or
//! connections and sub-resources in another order than the editor writes them, are
//! rewritten by the first save in a user's editor, so the user's first diff shows bytes
//! nobody touched. Runs with `GODOT_BIN` (prints SKIPPED without it).

mod support;

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use support::*;

/// Every .tres of the demo, with an integer property the test sets to the value it
/// already has: the add-on then saves the resource at its own path, as the editor saves
/// a resource edited in the inspector.
const RESOURCES: &[(&str, &str)] = &[
    ("resources/player_stats.tres", "max_health"),
    ("resources/ui_theme.tres", "default_font_size"),
];

/// Back-dates `file`'s mtime, so that a later mtime proves that a save wrote it.
fn backdate(file: &Path) {
    let f = std::fs::File::options().write(true).open(file).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(86_400))
        .unwrap();
}

fn was_written(file: &Path) -> bool {
    std::fs::metadata(file).unwrap().modified().unwrap()
        > SystemTime::UNIX_EPOCH + Duration::from_secs(86_400)
}

#[tokio::test(flavor = "multi_thread")]
async fn real_godot_demo_project_is_unchanged_by_opening_and_saving_it_in_the_editor() {
    let Some(godot) = godot_bin("the demo project's canonical-bytes check needs a Godot editor")
    else {
        return;
    };
    let started = Instant::now();
    let project = demo_copy();
    let p = project.path();
    install_addon(p);
    let before = files_under(&demo_project(), &["addons"]);
    let scenes: Vec<String> = before
        .keys()
        .filter(|f| f.ends_with(".tscn"))
        .cloned()
        .collect();
    let resources: Vec<&str> = before
        .keys()
        .filter(|f| f.ends_with(".tres"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        resources,
        RESOURCES.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        "every .tres of the demo is re-saved: add a new one to RESOURCES"
    );
    assert!(!scenes.is_empty());

    // The first open: what the import writes (.import files, uids) must already be there.
    run_godot(&godot, p, &["--import"]);

    // The editor, with the add-on enabled (godot_project/project.godot enables it).
    let client = connect(p).await;
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("editor.log");
    let mut editor = start_godot_editor(&godot, p, &log);
    for (i, scene) in scenes.iter().enumerate() {
        let res = format!("res://{scene}");
        let open = json!({"path": res});
        let r = if i == 0 {
            call_once_connected(&client, &mut editor, &log, "open_scene", open).await
        } else {
            call(&client, "open_scene", open).await
        };
        assert_ne!(
            r.is_error,
            Some(true),
            "{scene}: {:?}",
            r.structured_content
        );
        backdate(&p.join(scene));
        call_ok(&client, "save_scene", json!({"confirm": true})).await;
        assert!(
            was_written(&p.join(scene)),
            "save_scene did not write {scene}"
        );
    }
    for (file, property) in RESOURCES {
        let res = format!("res://{file}");
        let read = call_ok(&client, "read_resource", json!({"path": res})).await;
        let value: i64 = read["properties"][property]
            .as_i64()
            .unwrap_or_else(|| panic!("{file}: no integer {property} in {read}"));
        backdate(&p.join(file));
        call_ok(
            &client,
            "set_resource_property",
            json!({"path": res, "property": property, "value": value}),
        )
        .await;
        assert!(was_written(&p.join(file)), "the editor did not save {file}");
    }
    kill_godot_editor(&mut editor);
    client.cancel().await.unwrap();

    // What the editor writes when it opens and closes normally (--quit-after ends it the
    // way closing its window does, restoring the scenes it had open).
    let quit_log = run_godot(&godot, p, &["--editor", "--quit-after", "300"]);
    assert!(
        quit_log.contains("godot-mcp: editor plugin left the tree"),
        "the editor did not close normally:\n{quit_log}"
    );

    let after = files_under(p, &["addons"]);
    let added: Vec<_> = after.keys().filter(|f| !before.contains_key(*f)).collect();
    let removed: Vec<_> = before.keys().filter(|f| !after.contains_key(*f)).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the editor added {added:?} and removed {removed:?}: commit what it writes"
    );
    for (file, bytes) in &before {
        if after[file] != *bytes {
            let (old, new) = (
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(&after[file]),
            );
            let diff = similar::TextDiff::from_lines(&old, &new);
            panic!(
                "the editor rewrote {file}: commit the bytes it writes\n{}",
                diff.unified_diff()
                    .header("committed", "saved by the editor")
            );
        }
    }
    eprintln!(
        "PASSED: {} files of godot_project/ unchanged after the editor saved {} scenes and {} \
         resources ({:.1} s)",
        before.len(),
        scenes.len(),
        RESOURCES.len(),
        started.elapsed().as_secs_f64()
    );
}
