//! Screenshots: the editor's views (`capture_editor_screenshot`), the running game
//! (`game_screenshot`, in runtime.rs, stores its capture here), `compare_screenshots`
//! and `save_screenshot`.
//!
//! Every image a tool answers with is a *capture*: PNG bytes kept in the server's bounded
//! in-memory store ([`Captures`], a field of `AppState`) under an id the tool returns. A result type that carries an image implements [`ImageResult`] and is
//! registered with `ToolDef::imaging`; `server.rs` sends the stored bytes of the
//! [`ImageRef`] it names as MCP image content, so they are never base64 inside the JSON as well.
//! Images above the size cap (`Config::max_image_bytes`) are refused with `TOO_LARGE` naming
//! `max_edge`, since a client could not take them.
//!
//! The capture tools are read-only: they change nothing in the project. Keeping a capture
//! (for golden-image tests) is a file write, so it is a tool of its own, `save_screenshot`,
//! destructive by the classification rule like every file write, and journaled through
//! the one write seam (`files::plan_write`).

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub(crate) use crate::captures::{Capture, Captures, MAX_CAPTURES};
use crate::error::{ErrorCode, ToolError};
use crate::honesty::Persistence;
use crate::planes::project::Expect;
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::{Call, Out, ToolDef, ToolMeta};

/// Largest PNG file compare_screenshots reads from the project.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// CIE76 ΔE above which a pixel counts as visibly different (about one just-noticeable
/// difference).
pub(crate) const JND_DELTA_E: f64 = 2.3;
/// The default share of visibly different pixels two images may have and still count
/// as equal.
pub(crate) const DEFAULT_THRESHOLD: f64 = 0.001;

/// How often, and how far apart, a view the editor is still bringing on screen is asked
/// for again.
const VIEW_TRIES: u32 = 40;
const VIEW_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// The size cap of one image, in bytes of PNG (`Config::max_image_bytes`).
pub(crate) fn max_image_bytes(state: &AppState) -> usize {
    state.config.max_image_bytes
}

pub(crate) use crate::tools::registry::{ImageRef, ImageResult};

/// The `image` field of a serialized [`Shot`] or [`Compared`] (both name it so).
fn image_field(result: &Value) -> Option<ImageRef> {
    ImageRef::deserialize(result.get("image")?).ok()
}

impl<T> ImageResult for Shot<T> {
    fn image_of(result: &Value) -> Option<ImageRef> {
        image_field(result)
    }
}

impl ImageResult for Compared {
    fn image_of(result: &Value) -> Option<ImageRef> {
        image_field(result)
    }
}

/// The MCP image content for `image`: `(base64, mime type)` of the capture it names,
/// if the store still holds it.
pub(crate) fn image_content(captures: &Captures, image: &ImageRef) -> Option<(String, String)> {
    let cap = captures.fetch(&image.capture_id)?;
    Some((B64.encode(cap.png.as_slice()), image.mime_type.clone()))
}

fn too_large(bytes: usize, width: u32, height: u32, cap: usize) -> ToolError {
    let edge = width.max(height).max(1);
    // Area shrinks with the square of the edge; PNG size roughly with the area.
    let suggest = ((f64::from(edge) * (cap as f64 / bytes as f64).sqrt() * 0.9) as u32).max(16);
    ToolError::new(
        ErrorCode::TooLarge,
        format!(
            "the {width}x{height} screenshot is {bytes} bytes of PNG, more than the {cap} an \
             image may be"
        ),
    )
    .param("max_edge")
    .hint(format!(
        "Ask for a smaller image with max_edge (about {suggest} should fit); the cap is \
         GODOT_MCP_MAX_IMAGE_BYTES."
    ))
    .details(json!({"bytes": bytes, "width": width, "height": height, "max_image_bytes": cap}))
}

/// A result with an image: the capture's typed reference (which `server.rs` sends as
/// MCP image content, see [`ImageResult`]), its id and size, and the tool's own fields.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Shot<T> {
    pub image: ImageRef,
    pub capture_id: String,
    pub width: u32,
    pub height: u32,
    #[serde(flatten)]
    pub more: T,
}

/// Decode a producer's base64 PNG, check it against the cap, store it and build the
/// result: `{image: ImageRef, capture_id, width, height, ...more}`.
pub(crate) fn shot<T>(state: &AppState, png_base64: &str, more: T) -> Result<Shot<T>, ToolError> {
    let png = B64
        .decode(png_base64)
        .map_err(|e| ToolError::internal(format!("the capture is not base64: {e}")))?;
    let (width, height) = png_size(&png)
        .ok_or_else(|| ToolError::internal("the capture is not a PNG image".to_string()))?;
    let cap = max_image_bytes(state);
    if png.len() > cap {
        return Err(too_large(png.len(), width, height, cap));
    }
    let bytes = png.len();
    let id = state.captures.store(Capture {
        png: Arc::new(png),
        width,
        height,
    });
    let image = ImageRef {
        capture_id: id.clone(),
        mime_type: "image/png".into(),
        width,
        height,
        bytes,
    };
    Ok(Shot {
        image,
        capture_id: id,
        width,
        height,
        more,
    })
}

/// Width and height from a PNG's header, without decoding it.
fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    let reader =
        image::ImageReader::with_format(std::io::Cursor::new(png), image::ImageFormat::Png);
    reader.into_dimensions().ok()
}

/// A producer's "too large" answer (the add-on's or the probe's own check against the
/// cap it was given), as the same error.
pub(crate) fn producer_too_large(state: &AppState, v: &Value) -> ToolError {
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    too_large(
        n("bytes") as usize,
        n("width") as u32,
        n("height") as u32,
        max_image_bytes(state),
    )
}

/// The structured error for a Godot that cannot draw.
pub(crate) fn no_renderer(what: &str, display_server: &str) -> ToolError {
    ToolError::new(
        ErrorCode::PreconditionFailed,
        format!(
            "{what} has no renderer (display server: {display_server}): there are no pixels \
             to capture"
        ),
    )
    .required("no_renderer")
    .hint(
        "Screenshots need a Godot build with a renderer, started without --headless and with \
         a display (for example under Xvfb): play_scene renders by default when DISPLAY is set \
         (its answer's `display` says why it ran headless); start_editor takes headless: false.",
    )
}

pub(crate) fn tools() -> Vec<ToolDef> {
    fn meta<C: crate::rules::class::Class>(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        class: C,
        effect: Option<EffectKind>,
    ) -> ToolMeta<C> {
        ToolMeta::runtime(Toolset::Runtime, name, title, description, effect).of_class(class)
    }
    vec![
        ToolDef::imaging(
            meta(
                "capture_editor_screenshot",
                "Screenshot the editor",
                "Capture the editor's 2D or 3D viewport (2D: optionally cropped to a node), or \
                 its whole window, as an image (kept as capture_id).",
                class::ReadOnly,
                None,
            ),
            capture_editor,
        ),
        ToolDef::imaging(
            meta(
                "compare_screenshots",
                "Compare two screenshots",
                "Compare two PNGs (capture ids or res:// files): the share of visibly \
                 different pixels, equal within a threshold, and a difference image.",
                class::ReadOnly,
                None,
            ),
            compare,
        ),
        ToolDef::planned(
            meta(
                "save_screenshot",
                "Save a screenshot into the project",
                "Write a capture to a res:// .png file (a journaled file write).",
                class::Destructive,
                Some(EffectKind::File),
            ),
            plan_save,
        ),
    ]
}

// Which part of the editor to capture: the wire's own type, one for both.
use cmd::ScreenshotView as EditorView;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditorShotArgs {
    /// `2d` or `3d` viewport, or the whole `window` (default 2d).
    #[serde(default)]
    view: Option<EditorView>,
    /// Downscale so the longer edge is at most this many pixels (16–16384).
    #[serde(default)]
    #[schemars(range(min = 16, max = 16384))]
    max_edge: Option<u32>,
    /// 2d only: crop to this node's bounds as the view shows it (path from the scene root).
    #[serde(default)]
    node: Option<String>,
}

fn check_max_edge(max_edge: Option<u32>) -> Result<(), ToolError> {
    match max_edge {
        Some(m) if !(16..=16384).contains(&m) => Err(ToolError::invalid_params(
            "max_edge",
            format!("max_edge is {m}; it must be 16–16384"),
        )),
        _ => Ok(()),
    }
}

/// What an editor capture adds to its image: the view, the capture's scale against it
/// and, for the 2d view, where the scene's canvas lies in the image (and the crop).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EditorShot {
    pub view: &'static str,
    pub scale: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canvas_transform: Option<CanvasTransform>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crop: Option<[i32; 4]>,
}

/// A point p of the scene is at pixel `x_axis * p.x + y_axis * p.y + origin` (times
/// `scale`). The add-on's numbers are Godot's f32 ones; f32 keeps them digit for digit.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CanvasTransform {
    pub x_axis: [f32; 2],
    pub y_axis: [f32; 2],
    pub origin: [f32; 2],
}

async fn capture_editor(Call { state, args, .. }: Call<EditorShotArgs>) -> Out<Shot<EditorShot>> {
    check_max_edge(args.max_edge)?;
    let view = args.view.unwrap_or(EditorView::TwoD);
    if args.node.is_some() && !matches!(view, EditorView::TwoD) {
        return Err(ToolError::invalid_params(
            "node",
            "node crops the 2d view only",
        ));
    }
    let request = cmd::EditorScreenshot {
        view,
        max_edge: args.max_edge,
        max_bytes: max_image_bytes(&state),
        node: args.node.clone(),
    };
    // A 2D or 3D view that is not on screen is switched to by the add-on and drawn on a
    // later editor frame: ask again, a bounded number of times.
    let mut tries = 0;
    let v = loop {
        let (st, p) = (state.clone(), request.clone());
        let v = tokio::task::spawn_blocking(move || {
            crate::tools::kit::editor::ask(&st, &p, p.node.as_deref())
        })
        .await
        .map_err(|e| ToolError::internal(format!("editor request task failed: {e}")))??;
        if v["reason"] != "not_ready" {
            break v;
        }
        tries += 1;
        if tries >= VIEW_TRIES {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!("the editor's {} view did not come on screen", view.as_str()),
            )
            .required("editor_view")
            .hint("Show that view in the editor (its 2D/3D tab) and capture again."));
        }
        tokio::time::sleep(VIEW_RETRY).await;
    };
    if v["captured"] != json!(true) {
        return Err(match v["reason"].as_str() {
            Some("too_large") => producer_too_large(&state, &v),
            Some("outside_view") => ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "{} is outside the editor's 2D view",
                    args.node.as_deref().unwrap_or("the node")
                ),
            )
            .required("node_in_view")
            .hint("Scroll the 2D editor to it, or capture without node."),
            _ => no_renderer(
                "The connected editor",
                v["display_server"].as_str().unwrap_or("unknown"),
            ),
        });
    }
    let field = |key: &str| {
        ToolError::internal(format!(
            "the editor's screenshot reply has a malformed {key}"
        ))
    };
    let more = EditorShot {
        view: view.as_str(),
        scale: v["scale"].as_f64(),
        canvas_transform: serde_json::from_value(v["canvas_transform"].clone())
            .map_err(|_| field("canvas_transform"))?,
        crop: serde_json::from_value(v["crop"].clone()).map_err(|_| field("crop"))?,
    };
    shot(&state, v["png_base64"].as_str().unwrap_or(""), more)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompareArgs {
    /// The first image: a capture_id, or a res:// path of a PNG file.
    a: String,
    /// The second image, like `a`.
    b: String,
    /// Largest share (0–1) of visibly different pixels still counted equal (default 0.001).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    threshold: Option<f64>,
}

/// An image named by a compare argument: a capture id, or a PNG file in the project.
fn load(state: &AppState, param: &str, name: &str) -> Result<Vec<u8>, ToolError> {
    if name.starts_with("res://") {
        let path = ResPath::parse(name).map_err(|r| {
            ToolError::new(ErrorCode::PathRefused, format!("`{param}` is refused: {r}"))
                .param(param)
        })?;
        let real = state.project.resolve(param, &path)?;
        let len = std::fs::metadata(&real)
            .map_err(|e| ToolError::io(name, &e).param(param))?
            .len();
        if len > MAX_FILE_BYTES {
            return Err(ToolError::new(
                ErrorCode::TooLarge,
                format!("{name} is {len} bytes; at most {MAX_FILE_BYTES} are compared"),
            )
            .param(param));
        }
        return std::fs::read(&real).map_err(|e| ToolError::io(name, &e).param(param));
    }
    state
        .captures
        .fetch(name)
        .map(|c| c.png.to_vec())
        .ok_or_else(|| {
            ToolError::not_found(format!("no capture {name}"))
                .param(param)
                .hint(format!(
                    "Captures are kept in memory (the newest {MAX_CAPTURES}) until the server \
                 stops; take a new one, or pass a res:// PNG path."
                ))
        })
}

fn decode(param: &str, name: &str, png: &[u8]) -> Result<image::RgbaImage, ToolError> {
    image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .map(|i| i.to_rgba8())
        .map_err(|e| ToolError::invalid_params(param, format!("{name} is not a readable PNG: {e}")))
}

/// sRGB (alpha composited over black) to CIE L*a*b* (D65).
fn lab(p: &image::Rgba<u8>) -> [f64; 3] {
    let alpha = f64::from(p[3]) / 255.0;
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0 * alpha;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let (r, g, b) = (lin(p[0]), lin(p[1]), lin(p[2]));
    let x = (0.412_456_4 * r + 0.357_576_1 * g + 0.180_437_5 * b) / 0.950_47;
    let y = 0.212_672_9 * r + 0.715_152_2 * g + 0.072_175 * b;
    let z = (0.019_333_9 * r + 0.119_192 * g + 0.950_304_1 * b) / 1.088_83;
    let f = |t: f64| {
        if t > 216.0 / 24389.0 {
            t.cbrt()
        } else {
            (24389.0 / 27.0 * t + 16.0) / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// What comparing two images of one size found.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub(crate) struct Difference {
    /// Share of pixels whose colour differs visibly (ΔE76 > [`JND_DELTA_E`]).
    pub score: f64,
    pub changed_pixels: u64,
    pub total_pixels: u64,
    pub mean_delta_e: f64,
    pub max_delta_e: f64,
    /// The smallest rectangle holding every visibly changed pixel (`[x, y, w, h]`).
    pub changed_bounds: Option<[u32; 4]>,
}

/// Compare two images of the same size; returns the difference and its picture: the
/// first image dimmed to grey, with changed pixels in red (brighter for larger ΔE).
pub(crate) fn difference(
    a: &image::RgbaImage,
    b: &image::RgbaImage,
) -> (Difference, image::RgbaImage) {
    let (w, h) = a.dimensions();
    let mut out = image::RgbaImage::new(w, h);
    let (mut changed, mut sum, mut max) = (0u64, 0.0f64, 0.0f64);
    let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0u32, 0u32);
    for (x, y, pa) in a.enumerate_pixels() {
        let pb = b.get_pixel(x, y);
        let de = if pa == pb {
            0.0
        } else {
            let (la, lb) = (lab(pa), lab(pb));
            ((la[0] - lb[0]).powi(2) + (la[1] - lb[1]).powi(2) + (la[2] - lb[2]).powi(2)).sqrt()
        };
        sum += de;
        max = max.max(de);
        let grey = ((u32::from(pa[0]) * 2126 + u32::from(pa[1]) * 7152 + u32::from(pa[2]) * 722)
            / 10000
            * 3
            / 10) as u8;
        let px = if de > JND_DELTA_E {
            changed += 1;
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            image::Rgba([(128.0 + de.min(100.0) * 1.27) as u8, 0, 0, 255])
        } else {
            image::Rgba([grey, grey, grey, 255])
        };
        out.put_pixel(x, y, px);
    }
    let total = u64::from(w) * u64::from(h);
    let d = Difference {
        score: if total == 0 {
            0.0
        } else {
            changed as f64 / total as f64
        },
        changed_pixels: changed,
        total_pixels: total,
        mean_delta_e: if total == 0 { 0.0 } else { sum / total as f64 },
        max_delta_e: max,
        changed_bounds: (changed > 0).then(|| [x0, y0, x1 - x0 + 1, y1 - y0 + 1]),
    };
    (d, out)
}

/// compare_screenshots' verdict and its difference image (`image` null, with
/// `image_omitted` saying why, when the picture is over the size cap).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Compared {
    #[serde(flatten)]
    pub difference: Difference,
    pub equal: bool,
    pub threshold: f64,
    pub a: String,
    pub b: String,
    pub image: Option<ImageRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_omitted: Option<String>,
}

async fn compare(Call { state, args, .. }: Call<CompareArgs>) -> Out<Compared> {
    let threshold = args.threshold.unwrap_or(DEFAULT_THRESHOLD);
    if !(0.0..=1.0).contains(&threshold) {
        return Err(ToolError::invalid_params(
            "threshold",
            format!("threshold is {threshold}; it must be 0–1 (a share of pixels)"),
        ));
    }
    // Decoding and comparing a large image takes a while: off the async workers.
    tokio::task::spawn_blocking(move || {
        let a = decode("a", &args.a, &load(&state, "a", &args.a)?)?;
        let b = decode("b", &args.b, &load(&state, "b", &args.b)?)?;
        if a.dimensions() != b.dimensions() {
            return Err(ToolError::invalid_params(
                "b",
                format!(
                    "a is {}x{}, b is {}x{}: only images of one size can be compared",
                    a.width(),
                    a.height(),
                    b.width(),
                    b.height()
                ),
            )
            .hint("Capture both with the same view and max_edge."));
        }
        let (d, picture) = difference(&a, &b);
        let mut png = Vec::new();
        picture
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .map_err(|e| ToolError::internal(format!("encoding the difference image: {e}")))?;
        let mut out = Compared {
            equal: d.score <= threshold,
            difference: d,
            threshold,
            a: args.a,
            b: args.b,
            image: None,
            capture_id: None,
            width: None,
            height: None,
            image_omitted: None,
        };
        let b64 = B64.encode(&png);
        match shot(&state, &b64, ()) {
            Ok(s) => {
                out.image = Some(s.image);
                out.capture_id = Some(s.capture_id);
                out.width = Some(s.width);
                out.height = Some(s.height);
                Ok(out)
            }
            // The verdict stands without its picture.
            Err(e) if e.code == ErrorCode::TooLarge => {
                out.image_omitted = Some(e.message);
                Ok(out)
            }
            Err(e) => Err(e),
        }
    })
    .await
    .map_err(|e| ToolError::internal(format!("compare task failed: {e}")))?
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SaveArgs {
    /// The capture (from a capture tool or compare_screenshots).
    capture_id: String,
    /// Where to write it: a res:// path ending in .png.
    path: ResPath,
    /// Replace an existing file (default false: refuse it).
    #[serde(default)]
    overwrite: bool,
}

fn plan_save(
    state: Arc<AppState>,
    args: SaveArgs,
) -> Result<crate::tools::kit::file_write::WritePlan, ToolError> {
    if args.path.extension().as_deref() != Some("png") {
        return Err(ToolError::invalid_params(
            "path",
            format!("{} is not a .png path", args.path),
        ));
    }
    let cap = state.captures.fetch(&args.capture_id).ok_or_else(|| {
        ToolError::not_found(format!("no capture {}", args.capture_id))
            .param("capture_id")
            .hint(format!(
                "Captures are kept in memory (the newest {MAX_CAPTURES}) until the server stops."
            ))
    })?;
    let expect = if args.overwrite {
        Expect::Anything
    } else {
        Expect::Absent
    };
    crate::tools::kit::file_write::plan_write(
        &state,
        "path",
        args.path,
        cap.png.to_vec(),
        expect,
        Persistence::written_to_disk(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solid(w: u32, h: u32, c: [u8; 4]) -> image::RgbaImage {
        image::RgbaImage::from_pixel(w, h, image::Rgba(c))
    }

    #[test]
    fn identical_images_do_not_differ() {
        let a = solid(8, 4, [10, 200, 30, 255]);
        let (d, _) = difference(&a, &a.clone());
        assert_eq!(d.changed_pixels, 0);
        assert_eq!(d.score, 0.0);
        assert_eq!(d.changed_bounds, None);
    }

    #[test]
    fn a_moved_square_is_found_where_it_moved() {
        let mut a = solid(20, 10, [0, 0, 0, 255]);
        let mut b = a.clone();
        a.put_pixel(2, 3, image::Rgba([255, 0, 255, 255]));
        b.put_pixel(12, 5, image::Rgba([255, 0, 255, 255]));
        let (d, pic) = difference(&a, &b);
        assert_eq!(d.changed_pixels, 2);
        assert_eq!(d.changed_bounds, Some([2, 3, 11, 3]));
        assert!((d.score - 2.0 / 200.0).abs() < 1e-12);
        assert!(pic.get_pixel(12, 5)[0] > 128 && pic.get_pixel(0, 0)[0] == 0);
    }

    #[test]
    fn an_invisible_change_is_not_counted() {
        // One step in one channel of a mid grey: ΔE ≈ 0.4, below a noticeable difference.
        let a = solid(4, 4, [128, 128, 128, 255]);
        let b = solid(4, 4, [128, 129, 128, 255]);
        let (d, _) = difference(&a, &b);
        assert_eq!(d.changed_pixels, 0);
        assert!(d.mean_delta_e > 0.0 && d.max_delta_e < JND_DELTA_E, "{d:?}");
    }

    #[test]
    fn lab_of_white_and_black() {
        let w = lab(&image::Rgba([255, 255, 255, 255]));
        assert!(
            (w[0] - 100.0).abs() < 0.01 && w[1].abs() < 0.01 && w[2].abs() < 0.01,
            "{w:?}"
        );
        assert_eq!(lab(&image::Rgba([0, 0, 0, 255]))[0], 0.0);
    }

    /// A state of its own: a project, a journal, and `max_image_bytes` as its cap.
    fn server(max_image_bytes: usize) -> (tempfile::TempDir, AppState) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
        let config = crate::config::Config {
            max_image_bytes,
            ..Default::default()
        };
        let state = AppState::for_tests(dir.path()).with_config(config);
        (dir, state)
    }

    /// Two servers in one process share neither their captures nor their image cap:
    /// each is its own state's.
    #[test]
    fn two_servers_share_neither_captures_nor_the_image_cap() {
        let mut png = Vec::new();
        solid(8, 8, [200, 10, 10, 255])
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let b64 = B64.encode(&png);
        let (_a_dir, small) = server(png.len() - 1);
        let (_b_dir, large) = server(png.len());
        let e = shot(&small, &b64, ()).unwrap_err();
        assert_eq!(e.code, ErrorCode::TooLarge, "{e:?}");
        let kept = shot(&large, &b64, ()).unwrap();
        assert!(large.captures.fetch(&kept.capture_id).is_some());
        assert!(small.captures.fetch(&kept.capture_id).is_none());
    }
}
