//! The runtime probe's side of the session's control socket, as the stand-in game plays
//! it: hello with the nonce, then one answer a request from a small fixed game tree.

use std::io::Write;
use std::time::Duration;

use godot_mcp_protocol::probe::{
    self, Empty, FindUiReply, HeldReply, MonitorsReply, ProbeHello, ProbeHelloFrame, ProbeRefusal,
    ProbeReply, ProbeRequest, RecordedEvent, RecordedReply, RecordingReply, ReleasedReply,
    SampleReply, ScreenshotReply, StatusReply, TreeNode, TreeReply, UiElement, UiRect, ValueReply,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::{clock, host};

/// The stand-in's frame, as the probe answers `screenshot`.
fn screenshot(max_bytes: Option<u64>) -> Result<ScreenshotReply, ProbeRefusal> {
    use base64::Engine as _;
    const ONE_PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let png = match std::env::var_os("GODOT_STANDIN_SCREENSHOT") {
        Some(file) => std::fs::read(&file).map_err(|e| {
            ProbeRefusal::new("not_supported", format!("GODOT_STANDIN_SCREENSHOT: {e}"))
        })?,
        None => base64::engine::general_purpose::STANDARD
            .decode(ONE_PIXEL)
            .unwrap_or_default(),
    };
    if let Some(max) = max_bytes
        && png.len() as u64 > max
    {
        return Err(ProbeRefusal {
            bytes: Some(png.len() as u64),
            ..ProbeRefusal::new("too_large", format!("the PNG is {} bytes", png.len()))
        });
    }
    Ok(ScreenshotReply {
        png_base64: base64::engine::general_purpose::STANDARD.encode(&png),
        width: None,
        height: None,
        bytes: None,
    })
}

/// Connects to the control socket, says hello with the nonce, answers commands
/// one JSON line at a time. When the server goes away: releases held input at
/// once and quits `GODOT_MCP_PROBE_QUIT_MS` (15 s) later.
pub(crate) async fn probe(
    endpoint: String,
    nonce: String,
    stopped: tokio::sync::watch::Receiver<bool>,
    clock_held: bool,
) {
    let mut held: Vec<String> = Vec::new();
    let mut clock = clock::Clock::new(clock_held);
    match host::connect(&endpoint).await {
        Ok(stream) => serve_probe(stream, nonce, &mut held, &mut clock, stopped).await,
        Err(e) => eprintln!("godot-mcp probe: cannot connect to {endpoint}: {e}"),
    }
    let quit_ms: u64 = std::env::var("GODOT_MCP_PROBE_QUIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15_000);
    println!(
        "godot-mcp probe: server lost; released {} held input(s); quitting in {quit_ms} ms",
        held.len()
    );
    let _ = std::io::stdout().flush();
    tokio::time::sleep(Duration::from_millis(quit_ms)).await;
}

/// The stand-in game's scene tree: (path, class, text) depth-first, like a small game
/// with a HUD; `tree` and `find_ui` answer from it as the probe answers from the real one.
const TREE: [(&str, &str, &str); 6] = [
    ("/root", "Window", ""),
    ("/root/Main", "Node2D", ""),
    ("/root/Main/Player", "CharacterBody2D", ""),
    ("/root/Main/HUD", "CanvasLayer", ""),
    ("/root/Main/HUD/Score", "Label", "Score: 0"),
    ("/root/Main/HUD/StartButton", "Button", "Start"),
];

/// Whether stand-in class `class` is `ty` or inherits it (the few classes of [`TREE`]).
fn is_class(class: &str, ty: &str) -> bool {
    let chain: &[&str] = match class {
        "Label" => &["Label", "Control", "CanvasItem", "Node"],
        "Button" => &["Button", "BaseButton", "Control", "CanvasItem", "Node"],
        "Node2D" | "CharacterBody2D" => &["CharacterBody2D", "Node2D", "CanvasItem", "Node"],
        other => return other == ty || ty == "Node",
    };
    chain.contains(&ty) && (class != "Node2D" || ty != "CharacterBody2D")
}

/// One answer of the stand-in probe: the body of its request's reply type, or a refusal.
type Answer = Result<serde_json::Value, ProbeRefusal>;

/// The body `T` of an answer, in its wire form.
fn body<T: serde::Serialize>(t: T) -> Answer {
    serde_json::to_value(t).map_err(|e| ProbeRefusal::new("encode_failed", e.to_string()))
}

fn no_node(path: &str) -> ProbeRefusal {
    ProbeRefusal::new("node_not_found", format!("no node {path}"))
}

/// The probe's `tree` answer, from [`TREE`].
fn tree(root: &str, max_depth: Option<u64>, offset: u64, limit: u64) -> Answer {
    if !TREE.iter().any(|(p, _, _)| *p == root) {
        return Err(no_node(root));
    }
    let base_depth = root.matches('/').count();
    let max_depth = max_depth.unwrap_or(u64::MAX);
    let all: Vec<_> = TREE
        .iter()
        .filter(|(p, _, _)| *p == root || p.starts_with(&format!("{root}/")))
        .map(|(p, c, _)| (p, c, (p.matches('/').count() - base_depth) as u64))
        .filter(|(_, _, d)| *d <= max_depth)
        .collect();
    let total = all.len() as u64;
    let nodes = all
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|(p, c, d)| {
            let children = TREE
                .iter()
                .filter(|(q, _, _)| {
                    q.strip_prefix(*p)
                        .and_then(|r| r.strip_prefix('/'))
                        .is_some_and(|r| !r.contains('/'))
                })
                .count() as u64;
            TreeNode {
                path: p.to_string(),
                name: p.rsplit('/').next().unwrap_or("").to_string(),
                class: c.to_string(),
                depth: d,
                children,
            }
        })
        .collect();
    body(TreeReply {
        nodes,
        total,
        capped: false,
    })
}

/// The probe's `find_ui` answer, from [`TREE`].
fn find_ui(text: Option<&str>, ty: &str, limit: u64) -> Answer {
    let text = text.map(str::to_lowercase);
    let hits: Vec<_> = TREE
        .iter()
        .enumerate()
        .filter(|(_, (_, c, t))| {
            is_class(c, "Control")
                && is_class(c, ty)
                && text.as_ref().is_none_or(|x| t.to_lowercase().contains(x))
        })
        .collect();
    let elements = hits
        .iter()
        .take(limit as usize)
        .map(|(i, (p, c, t))| UiElement {
            path: p.to_string(),
            class: c.to_string(),
            text: t.to_string(),
            rect: UiRect {
                x: 10.0,
                y: 10.0 + 40.0 * *i as f32,
                w: 120.0,
                h: 32.0,
            },
            visible: true,
        })
        .collect();
    body(FindUiReply {
        elements,
        matched: hits.len() as u64,
        capped: false,
    })
}

/// The probe's `monitors` answer: like a running game, fps near 60, the frame counter
/// moving the times.
fn monitors(connected_at: std::time::Instant) -> Answer {
    let t = connected_at.elapsed().as_millis() as f64;
    let monitors = [
        ("fps", 60.0),
        ("process_time_ms", 1.0 + (t % 7.0) / 10.0),
        ("physics_time_ms", 0.5),
        ("navigation_time_ms", 0.0),
        ("memory_static_bytes", 4.0e6),
        ("memory_static_max_bytes", 5.0e6),
        ("objects", 900.0),
        ("resources", 40.0),
        ("nodes", TREE.len() as f64),
        ("orphan_nodes", 0.0),
        ("draw_calls", 0.0),
        ("objects_drawn", 0.0),
        ("primitives_drawn", 0.0),
        ("video_memory_bytes", 0.0),
        ("physics_2d_active_objects", 1.0),
        ("physics_2d_collision_pairs", 0.0),
        ("physics_3d_active_objects", 0.0),
        ("physics_3d_collision_pairs", 0.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), Some(v)))
    .collect();
    body(MonitorsReply { monitors })
}

async fn serve_probe(
    stream: host::Stream,
    nonce: String,
    held: &mut Vec<String>,
    clock: &mut clock::Clock,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    let (rd, mut wr) = stream.into_split();
    let connected_at = std::time::Instant::now();
    // record_input: the input requests received since record_start, timed like the
    // probe's recorder node sees them (a tap's release in the same frame, a hold's when
    // it ends).
    let mut recording: Option<(std::time::Instant, Vec<RecordedEvent>)> = None;
    let hello = ProbeHelloFrame {
        hello: ProbeHello {
            nonce,
            pid: std::process::id(),
            renderer: false,
        },
    };
    let hello = serde_json::to_string(&hello).unwrap_or_default();
    let _ = wr.write_all(format!("{hello}\n").as_bytes()).await;
    let mut lines = BufReader::new(rd).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        // Stopped in the debugger: the main loop, where the probe answers, waits.
        if stopped.wait_for(|s| !*s).await.is_err() {
            return;
        }
        let decoded = probe::decode_request(line.as_bytes());
        // GODOT_STANDIN_BREAK=1: like a game stopped at a breakpoint — its main loop
        // (where the real probe answers) does not run, so nothing is answered.
        if std::env::var_os("GODOT_STANDIN_BREAK").is_some() {
            let cmd = decoded.as_ref().map_or("?", |f| f.request.cmd());
            println!("standin: at a breakpoint, not answering {cmd:?}");
            continue;
        }
        let (id, answer) = match decoded {
            Ok(frame) => {
                let answer = match frame.request {
                    ProbeRequest::Quit {} => {
                        let bye = ProbeReply::ok(frame.id, Empty {}).to_json();
                        let _ = wr.write_all(format!("{bye}\n").as_bytes()).await;
                        std::process::exit(0);
                    }
                    request => answer(request, held, clock, &mut recording, connected_at).await,
                };
                (Some(frame.id), answer)
            }
            // The real probe answers a request it cannot read with the same refusal.
            Err((id, refusal)) => (id, Err(refusal)),
        };
        let Some(id) = id else { continue };
        let reply = ProbeReply {
            id,
            outcome: answer,
        }
        .to_json();
        if wr.write_all(format!("{reply}\n").as_bytes()).await.is_err() {
            break;
        }
    }
}

/// The stand-in probe's answer to one request (all but `quit`).
async fn answer(
    request: ProbeRequest,
    held: &mut Vec<String>,
    clock: &mut clock::Clock,
    recording: &mut Option<(std::time::Instant, Vec<RecordedEvent>)>,
    connected_at: std::time::Instant,
) -> Answer {
    match request {
        ProbeRequest::Monitors {} => monitors(connected_at),
        ProbeRequest::Tree {
            root,
            max_depth,
            offset,
            limit,
        } => tree(&root, max_depth, offset, limit),
        ProbeRequest::FindUi { text, class, limit } => find_ui(text.as_deref(), &class, limit),
        ProbeRequest::Input {
            event,
            at_frame: Some(at),
            hold_frames,
            ..
        } => {
            let hold = hold_frames.unwrap_or(1);
            clock.schedule(event.clone(), at, hold)?;
            if let Some((start, events)) = recording {
                let t = start.elapsed().as_millis() as u64;
                for (frame, pressed) in [(at, true), (at + hold, false)] {
                    events.push(RecordedEvent {
                        t_ms: t + (frame - at) * 16,
                        frame: Some(frame),
                        event: event.clone(),
                        pressed,
                    });
                }
            }
            body(HeldReply {
                held: held.len() as u64 + clock.held_inputs(),
            })
        }
        ProbeRequest::Input { event, hold_ms, .. } => {
            let what = serde_json::to_string(&event).unwrap_or_default();
            if let Some((start, events)) = recording {
                let t = start.elapsed().as_millis() as u64;
                let frame = clock.frame() + 1;
                events.push(RecordedEvent {
                    t_ms: t,
                    frame: Some(frame),
                    event: event.clone(),
                    pressed: true,
                });
                events.push(RecordedEvent {
                    t_ms: t + hold_ms,
                    frame: Some(frame + hold_ms / 16),
                    event,
                    pressed: false,
                });
            }
            if hold_ms > 0 {
                held.push(what.clone());
            }
            println!("standin: input {what}");
            body(HeldReply {
                held: held.len() as u64 + clock.held_inputs(),
            })
        }
        ProbeRequest::RecordStart {} => {
            *recording = Some((std::time::Instant::now(), Vec::new()));
            body(RecordingReply { recording: true })
        }
        ProbeRequest::RecordStop {} => match recording.take() {
            Some((start, mut events)) => {
                events.sort_by_key(|e| e.t_ms);
                body(RecordedReply {
                    events,
                    skipped: Default::default(),
                    duration_ms: start.elapsed().as_millis() as u64,
                })
            }
            None => Err(ProbeRefusal::new(
                "not_recording",
                "no input recording is running (start one with record_input)",
            )),
        },
        // One value a frame (~16 ms), rendered as the probe renders values (strings).
        ProbeRequest::Sample {
            node,
            property,
            frames,
        } => {
            if !TREE.iter().any(|(p, _, _)| *p == node) {
                return Err(no_node(&node));
            }
            let mut values = Vec::new();
            for _ in 0..frames.clamp(1, 600) {
                tokio::time::sleep(Duration::from_millis(16)).await;
                values.push(if property == "ticks" {
                    connected_at.elapsed().as_millis().to_string()
                } else {
                    format!("standin:{node}:{property}")
                });
            }
            body(SampleReply { values })
        }
        ProbeRequest::ReleaseAll {} => {
            let n = held.len() as u64 + clock.release_all();
            held.clear();
            body(ReleasedReply { released: n })
        }
        // Like a Godot build with a renderer when GODOT_STANDIN_RENDERER=1: a real
        // PNG of "the frame" (the file GODOT_STANDIN_SCREENSHOT names, else a 1×1
        // one), after `frames` frames (a frame is ~16 ms), refused like the probe
        // refuses one above the request's `max_bytes`; otherwise like the headless
        // build. It does not downscale (`max_edge` is the real probe's).
        ProbeRequest::Screenshot {
            frames, max_bytes, ..
        } if std::env::var_os("GODOT_STANDIN_RENDERER").is_some() => {
            std::thread::sleep(std::time::Duration::from_millis(16 * frames.min(120)));
            screenshot(max_bytes).and_then(body)
        }
        ProbeRequest::Screenshot { .. } => Err(ProbeRefusal::new(
            "no_renderer",
            "this Godot build has no renderer (headless)",
        )),
        // `ticks` is wall time (ms since the probe connected), `frame` and `y` follow
        // the clock (`clock.rs`); any other property is a fixed string naming itself.
        ProbeRequest::GetProperty { node, property } => body(ValueReply {
            value: clock.property(&node, &property),
        }),
        ProbeRequest::Evaluate { expression } => clock
            .evaluate(&expression)
            .and_then(|value| body(ValueReply { value })),
        ProbeRequest::Status {} => body(StatusReply {
            breaked: false,
            held: held.len() as u64 + clock.held_inputs(),
        }),
        ProbeRequest::ClockPause {} => body(clock.pause()),
        ProbeRequest::ClockResume {} => body(clock.resume()),
        ProbeRequest::ClockStep(s) => clock
            .step(
                s.frames,
                s.unit,
                s.until.as_deref(),
                &s.watch,
                s.every,
                &s.at,
            )
            .and_then(body),
        ProbeRequest::Quit {} => body(Empty {}),
    }
}
