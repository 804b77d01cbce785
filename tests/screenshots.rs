//! Screenshots, server side, end to end without a renderer: the real `godot-mcp` binary
//! and a real MCP client; the game is the stand-in `godot` (its probe answers with the
//! PNG file a test writes with the `image` crate) and the editor is a protocol peer in the
//! add-on's place. What is proven: images travel as MCP image content named by a typed
//! capture reference (never base64 inside the JSON), the size cap and its error, the
//! comparison on real PNGs, saving a capture through the journal, and the honest
//! no-renderer precondition. The pixels of a real renderer are tests/godot_runtime.rs's.
// Unix only: launches need the process-group boundary (docs/platforms.md).
#![cfg(unix)]

mod support;

use std::path::Path;

use base64::Engine as _;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

const MAGENTA: [u8; 4] = [255, 0, 255, 255];
const GREY: [u8; 4] = [77, 77, 77, 255];

/// A 64×48 grey frame with a 8×8 magenta square at (x, y), as PNG bytes.
fn frame(x: u32, y: u32) -> Vec<u8> {
    let mut img = image::RgbaImage::from_pixel(64, 48, image::Rgba(GREY));
    for dy in 0..8 {
        for dx in 0..8 {
            img.put_pixel(x + dx, y + dy, image::Rgba(MAGENTA));
        }
    }
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    png
}

fn project() -> tempfile::TempDir {
    support::tiny_project("eyes")
}

fn state_dir() -> tempfile::TempDir {
    support::short_state_dir("sc")
}

async fn start(project: &Path, state: &Path, env: &[(&str, &str)]) -> Client {
    support::serve_standin(project, state, env, support::server_stderr())
        .await
        .0
}

use support::{call, call_err as err, call_ok_result as ok};

/// The result's MCP image content, decoded: (PNG bytes, pixels).
fn image_of(r: &CallToolResult) -> (Vec<u8>, image::RgbaImage) {
    let wire = serde_json::to_value(&r.content[0]).unwrap();
    assert_eq!(wire["type"], "image", "{wire}");
    assert_eq!(wire["mimeType"], "image/png", "{wire}");
    let png = base64::engine::general_purpose::STANDARD
        .decode(wire["data"].as_str().unwrap())
        .unwrap();
    let img = image::load_from_memory_with_format(&png, image::ImageFormat::Png)
        .unwrap()
        .to_rgba8();
    (png, img)
}

/// Kills the stand-in games of one test when it ends (even on a failed assertion).
struct Cleanup(String);
impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in support::processes_with(&self.0) {
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn game_captures_are_typed_image_content_compared_and_saved_through_the_journal() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let shots = tempfile::tempdir().unwrap();
    let file = shots.path().join("frame.png");
    std::fs::write(&file, frame(4, 4)).unwrap();
    let file_s = file.display().to_string();
    let env = [
        ("GODOT_STANDIN_HANG", "1"),
        ("GODOT_STANDIN_RENDERER", "1"),
        ("GODOT_STANDIN_SCREENSHOT", file_s.as_str()),
    ];
    let client = start(p.path(), s.path(), &env).await;
    ok(&client, "play_scene", json!({})).await;

    // The image is MCP image content with the very bytes the game sent; the structured
    // content names it by a typed reference and never carries the bytes.
    let first = ok(&client, "game_screenshot", json!({"frames": 0})).await;
    let (png, img) = image_of(&first);
    assert_eq!(png, frame(4, 4), "the bytes the game sent");
    assert_eq!(img.get_pixel(5, 5).0, MAGENTA);
    let v = first.structured_content.clone().unwrap();
    let id_a = v["capture_id"].as_str().unwrap().to_string();
    assert_eq!(
        v["image"],
        json!({"capture_id": id_a, "mime_type": "image/png", "width": 64, "height": 48,
               "bytes": png.len()}),
        "{v}"
    );
    assert!(
        !v.to_string().contains("iVBORw0KGgo"),
        "no base64 PNG in the structured content: {v}"
    );

    // The same frame again: equal. The square moved: different, where it moved.
    let id_same = ok(&client, "game_screenshot", json!({"frames": 0}))
        .await
        .structured_content
        .unwrap()["capture_id"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(&file, frame(40, 30)).unwrap();
    let id_moved = ok(&client, "game_screenshot", json!({"frames": 0}))
        .await
        .structured_content
        .unwrap()["capture_id"]
        .as_str()
        .unwrap()
        .to_string();
    let same = ok(
        &client,
        "compare_screenshots",
        json!({"a": id_a, "b": id_same}),
    )
    .await;
    let sv = same.structured_content.clone().unwrap();
    assert_eq!(sv["equal"], true, "{sv}");
    assert_eq!(sv["score"], 0.0, "{sv}");
    let moved = ok(
        &client,
        "compare_screenshots",
        json!({"a": id_a, "b": id_moved}),
    )
    .await;
    let mv = moved.structured_content.clone().unwrap();
    assert_eq!(mv["equal"], false, "{mv}");
    assert_eq!(mv["changed_pixels"], 128, "two 8×8 squares: {mv}");
    assert_eq!(mv["changed_bounds"], json!([4, 4, 44, 34]), "{mv}");
    // The difference image: red where the square was and where it is, grey elsewhere.
    let (_, diff) = image_of(&moved);
    assert!(diff.get_pixel(5, 5)[0] > 128 && diff.get_pixel(5, 5)[1] == 0);
    assert!(diff.get_pixel(41, 31)[0] > 128 && diff.get_pixel(41, 31)[1] == 0);
    let bg = diff.get_pixel(20, 40);
    assert!(bg[0] == bg[1] && bg[1] == bg[2], "grey background: {bg:?}");
    // A threshold above the changed share counts them equal.
    let lax = ok(
        &client,
        "compare_screenshots",
        json!({"a": id_a, "b": id_moved, "threshold": 0.5}),
    )
    .await;
    assert_eq!(lax.structured_content.unwrap()["equal"], true);

    // Saving a capture is a journaled file write, destructive (needs confirm).
    let e = err(
        &client,
        "save_screenshot",
        json!({"capture_id": id_a, "path": "res://golden/a.png"}),
    )
    .await;
    assert_eq!(e["param"], "confirm", "{e}");
    assert!(!p.path().join("golden/a.png").exists());
    // Its dry run writes nothing and reports what the real run then reports.
    let preview = ok(
        &client,
        "save_screenshot",
        json!({"capture_id": id_a, "path": "res://golden/a.png", "confirm": true,
               "dry_run": true}),
    )
    .await
    .structured_content
    .unwrap();
    assert!(!p.path().join("golden/a.png").exists());
    let saved = ok(
        &client,
        "save_screenshot",
        json!({"capture_id": id_a, "path": "res://golden/a.png", "confirm": true}),
    )
    .await
    .structured_content
    .unwrap();
    for (k, v) in preview.as_object().unwrap() {
        if ![
            "dry_run",
            "applied",
            "confirm_required",
            "persisted",
            "reason",
        ]
        .contains(&k.as_str())
        {
            assert_eq!(&saved[k], v, "{k}: preview {preview}, real {saved}");
        }
    }
    support::assert_preview_verdict(&preview, &saved, "save_screenshot");
    assert_eq!(saved["action"], "create", "{saved}");
    assert_eq!(
        std::fs::read(p.path().join("golden/a.png")).unwrap(),
        frame(4, 4)
    );
    let txn = saved["transaction_id"].as_str().unwrap();
    let list = ok(&client, "list_transactions", json!({}))
        .await
        .structured_content
        .unwrap();
    let row = list["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["transaction_id"] == txn)
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(row["effect_kind"], "file");
    assert_eq!(row["status"], "committed");
    // An existing file is refused without overwrite, and left as it was.
    let e = err(
        &client,
        "save_screenshot",
        json!({"capture_id": id_moved, "path": "res://golden/a.png", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "STALE", "{e}");
    assert_eq!(
        std::fs::read(p.path().join("golden/a.png")).unwrap(),
        frame(4, 4)
    );
    let e = err(
        &client,
        "save_screenshot",
        json!({"capture_id": id_a, "path": "res://golden/a.jpg", "confirm": true}),
    )
    .await;
    assert_eq!(e["param"], "path", "{e}");

    // A golden file in the project compares with a capture.
    let golden = ok(
        &client,
        "compare_screenshots",
        json!({"a": "res://golden/a.png", "b": id_same}),
    )
    .await;
    assert_eq!(golden.structured_content.unwrap()["equal"], true);

    // Bad input: a structured error each, naming the parameter.
    let e = err(
        &client,
        "compare_screenshots",
        json!({"a": "res://../outside.png", "b": id_a}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED", "{e}");
    assert_eq!(e["param"], "a", "{e}");
    let e = err(
        &client,
        "compare_screenshots",
        json!({"a": id_a, "b": "cap-nope-1"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");
    assert_eq!(e["param"], "b", "{e}");
    std::fs::write(p.path().join("small.png"), {
        let mut png = Vec::new();
        image::RgbaImage::new(3, 3)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        png
    })
    .unwrap();
    let e = err(
        &client,
        "compare_screenshots",
        json!({"a": id_a, "b": "res://small.png"}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert!(e["message"].as_str().unwrap().contains("64x48"), "{e}");
    std::fs::write(p.path().join("not.png"), "not a png").unwrap();
    let e = err(
        &client,
        "compare_screenshots",
        json!({"a": "res://not.png", "b": id_a}),
    )
    .await;
    assert_eq!(e["param"], "a", "{e}");
    ok(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}

/// Above the size cap a capture is refused with TOO_LARGE naming max_edge; the game's
/// probe is told the cap (it refuses before sending the bytes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_above_the_cap_is_too_large_and_names_max_edge() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let shots = tempfile::tempdir().unwrap();
    let file = shots.path().join("frame.png");
    let png = frame(4, 4);
    std::fs::write(&file, &png).unwrap();
    let file_s = file.display().to_string();
    let cap = (png.len() - 1).to_string();
    let env = [
        ("GODOT_STANDIN_HANG", "1"),
        ("GODOT_STANDIN_RENDERER", "1"),
        ("GODOT_STANDIN_SCREENSHOT", file_s.as_str()),
        ("GODOT_MCP_MAX_IMAGE_BYTES", cap.as_str()),
    ];
    let client = start(p.path(), s.path(), &env).await;
    ok(&client, "play_scene", json!({})).await;
    let e = err(&client, "game_screenshot", json!({"frames": 0})).await;
    assert_eq!(e["code"], "TOO_LARGE", "{e}");
    assert_eq!(e["param"], "max_edge", "{e}");
    assert!(e["hint"].as_str().unwrap().contains("max_edge"), "{e}");
    assert_eq!(e["details"]["bytes"], png.len(), "{e}");
    assert_eq!(e["details"]["max_image_bytes"], png.len() - 1, "{e}");
    let e = err(&client, "game_screenshot", json!({"max_edge": 8})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert_eq!(e["param"], "max_edge", "{e}");
    ok(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}

/// A headless game: the structured precondition names what is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_game_has_no_renderer_and_says_so() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let client = start(p.path(), s.path(), &[("GODOT_STANDIN_HANG", "1")]).await;
    ok(&client, "play_scene", json!({})).await;
    let e = err(&client, "game_screenshot", json!({})).await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "no_renderer", "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("no renderer") && msg.contains("headless"),
        "{e}"
    );
    assert!(e["hint"].as_str().unwrap().contains("renderer"), "{e}");
    ok(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}

/// Calls `name` until the bridge counts as connected (the peer's hello was accepted a
/// moment before the server records the connection).
async fn once_connected(client: &Client, name: &'static str, args: Value) -> CallToolResult {
    loop {
        let r = call(client, name, args.clone()).await;
        let required = r
            .structured_content
            .as_ref()
            .map(|v| v["error"]["required"].clone());
        if required != Some(json!("bridge_connected")) {
            return r;
        }
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editor_captures_travel_as_images_and_a_headless_editor_says_no_renderer() {
    let p = project();
    let s = state_dir();
    let client = start(p.path(), s.path(), &[("GODOT_MCP_MAX_IMAGE_BYTES", "4000")]).await;
    // No editor: the bridge precondition.
    let e = err(&client, "capture_editor_screenshot", json!({})).await;
    assert_eq!(e["required"], "bridge_connected", "{e}");

    // A headless editor answers that it cannot render.
    let d = support::wait_discovery(p.path());
    let headless = support::addon_peer(&d, |r| match r.cmd.as_str() {
        "editor.screenshot" => {
            json!({"captured": false, "reason": "no_renderer", "display_server": "headless"})
        }
        _ => json!({}),
    });
    let r = once_connected(&client, "capture_editor_screenshot", json!({"view": "3d"})).await;
    assert_eq!(r.is_error, Some(true));
    let e = r.structured_content.unwrap()["error"].clone();
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "no_renderer", "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("editor") && msg.contains("no renderer") && msg.contains("headless"),
        "{e}"
    );
    client.cancel().await.unwrap();
    let seen = headless.join().unwrap();
    let shot = seen.iter().find(|r| r.cmd == "editor.screenshot").unwrap();
    assert_eq!(
        shot.params,
        json!({"view": "3d", "max_bytes": 4000}),
        "the add-on is told the view and the cap"
    );

    // An editor that renders: its PNG is image content. One that sends more than the cap
    // (ignoring max_bytes) is refused by the server itself.
    let s = state_dir();
    let client = start(p.path(), s.path(), &[("GODOT_MCP_MAX_IMAGE_BYTES", "4000")]).await;
    let d = support::wait_discovery(p.path());
    let not_ready = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = not_ready.clone();
    let _rendering = support::addon_peer(&d, move |r| {
        if r.params["node"] == "Far/Away" {
            return json!({"captured": false, "reason": "outside_view", "node": "Far/Away"});
        }
        if r.params["view"] == "3d" {
            return json!({"captured": false, "reason": "not_ready", "view": "3d"});
        }
        if r.params["view"] == "2d" && counter.load(std::sync::atomic::Ordering::SeqCst) < 2 {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return json!({"captured": false, "reason": "not_ready", "view": "2d"});
        }
        let big = r.params["view"] == "window";
        let png = if big {
            // Noise does not compress: well above 4000 bytes.
            let mut img = image::RgbaImage::new(64, 64);
            for (i, px) in img.pixels_mut().enumerate() {
                let v = (i as u32).wrapping_mul(2_654_435_761);
                *px = image::Rgba([(v >> 24) as u8, (v >> 16) as u8, (v >> 8) as u8, 255]);
            }
            let mut png = Vec::new();
            img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
                .unwrap();
            png
        } else {
            frame(10, 20)
        };
        json!({"captured": true, "view": r.params["view"], "scale": 1.0,
               "width": 64, "height": 48,
               "png_base64": base64::engine::general_purpose::STANDARD.encode(png),
               "canvas_transform": {"x_axis": [1.0, 0.0], "y_axis": [0.0, 1.0], "origin": [0.0, 0.0]}})
    });
    let r = once_connected(&client, "capture_editor_screenshot", json!({"view": "2d"})).await;
    assert_ne!(r.is_error, Some(true), "{:?}", r.structured_content);
    // The view was not on screen twice (the add-on switched to it): the server asked again.
    assert_eq!(
        not_ready.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "asked again until the view came up"
    );
    let (png, img) = image_of(&r);
    assert_eq!(png, frame(10, 20));
    assert_eq!(img.get_pixel(12, 22).0, MAGENTA);
    let v = r.structured_content.unwrap();
    assert_eq!(v["view"], "2d", "{v}");
    assert_eq!(v["image"]["width"], 64, "{v}");
    assert_eq!(v["canvas_transform"]["origin"], json!([0.0, 0.0]), "{v}");
    let e = err(
        &client,
        "capture_editor_screenshot",
        json!({"view": "window"}),
    )
    .await;
    assert_eq!(e["code"], "TOO_LARGE", "{e}");
    assert_eq!(e["param"], "max_edge", "{e}");
    // A crop to a node: the node travels to the add-on; one outside the view is a
    // precondition; a crop of another view is bad input.
    let e = err(
        &client,
        "capture_editor_screenshot",
        json!({"view": "2d", "node": "Far/Away"}),
    )
    .await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "node_in_view", "{e}");
    assert!(e["message"].as_str().unwrap().contains("Far/Away"), "{e}");
    let e = err(
        &client,
        "capture_editor_screenshot",
        json!({"view": "window", "node": "Box"}),
    )
    .await;
    assert_eq!(e["param"], "node", "{e}");
    // A view that never comes on screen: a bounded wait, then a precondition.
    let e = err(&client, "capture_editor_screenshot", json!({"view": "3d"})).await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "editor_view", "{e}");
    let e = err(&client, "capture_editor_screenshot", json!({"view": "4d"})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    client.cancel().await.unwrap();
}
