//! canonicalize_resource against a real Godot 4.4 (`GODOT_BIN`; prints SKIPPED without
//! it): the helper's save must be what the editor writes, uid links included.
//!
//! Every scene and resource of `godot_project/` is already byte-identical to the editor's
//! save (tests/demo_canonical.rs proves it), so canonicalizing each one through the real
//! server must change no byte: the header `uid=`, each ext_resource `uid=` and each
//! ext_resource id are kept. Godot's text saver outside the editor writes no uid and,
//! saving to a path other than the file's own, makes new ext ids; files that refer to
//! these by uid would lose the link.

mod support;

use serde_json::json;
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn real_godot_canonicalize_keeps_every_uid_and_ext_id_of_the_demo_project() {
    let Some(godot) = godot_bin("canonicalize_resource runs Godot's own ResourceSaver") else {
        return;
    };
    let project = demo_copy();
    let p = project.path();
    install_addon(p);
    // What an opened project has: the import (icon.svg's texture) and the uid cache.
    run_godot(&godot, p, &["--import"]);
    let committed = files_under(&demo_project(), &["addons"]);
    let texts: Vec<&String> = committed
        .keys()
        .filter(|f| f.ends_with(".tres") || f.ends_with(".tscn"))
        .collect();
    assert!(
        texts.contains(&&"resources/player_stats.tres".to_string())
            && texts.contains(&&"resources/ui_theme.tres".to_string()),
        "{texts:?}"
    );

    let client = connect(p).await;
    for file in &texts {
        let v = call_ok(
            &client,
            "canonicalize_resource",
            json!({"path": format!("res://{file}"), "confirm": true}),
        )
        .await;
        assert_eq!(v["applied"], true, "{file}: {v}");
        let after = std::fs::read(p.join(file)).unwrap();
        if after != committed[*file] {
            let (old, new) = (
                String::from_utf8_lossy(&committed[*file]),
                String::from_utf8_lossy(&after),
            );
            panic!(
                "canonicalize_resource rewrote the editor-canonical {file}:\n{}",
                similar::TextDiff::from_lines(&old, &new)
                    .unified_diff()
                    .header("as the editor saves it", "canonicalized")
            );
        }
    }

    // A file that is not canonical (blanks Godot does not write) becomes the editor's
    // bytes, uid links and all.
    let stats = "resources/player_stats.tres";
    let canonical = String::from_utf8(committed[stats].clone()).unwrap();
    let messy = canonical.replace("]\n", "]   \n").replace('\n', "\n\n") + "\n\n";
    std::fs::write(p.join(stats), &messy).unwrap();
    let v = call_ok(
        &client,
        "canonicalize_resource",
        json!({"path": format!("res://{stats}"), "confirm": true}),
    )
    .await;
    assert_eq!(v["applied"], true, "{v}");
    assert_eq!(std::fs::read_to_string(p.join(stats)).unwrap(), canonical);
    client.cancel().await.unwrap();
    eprintln!(
        "PASSED: {} demo files canonicalized unchanged, a messy {stats} restored",
        texts.len()
    );
}
