//! Screenshots: the editor's views (`editor.screenshot`) and the encoding the runtime
//! probe shares (a viewport's image, downscaled to a maximum edge, as PNG in base64).
//!
//! A Godot without a renderer (the headless display server) has no pixels to read: the
//! editor answers `{captured: false, reason: "no_renderer", display_server}` — a read that
//! found nothing to read, not a failure — and the server turns it into a precondition.
//! A PNG above the request's `max_bytes` is answered `{captured: false, reason: "too_large",
//! bytes, width, height}` the same way (the server words the error), and a 2D or 3D view
//! that is not on screen `{captured: false, reason: "not_ready"}` after switching the
//! editor's main screen to it (the server asks again once it has drawn).

use godot::classes::image::Interpolation;
use godot::classes::{
    CanvasItem, Control, EditorInterface, Engine, Image, Marshalls, Node, Viewport,
};
use godot::prelude::*;
use godot_mcp_editor_core::command::{ScreenshotRequest, ScreenshotView, fit_within};
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde_json::{Value as Json, json};

/// The display server's name (`headless` when nothing can be drawn).
pub(crate) fn display_server() -> String {
    Engine::singleton()
        .get_singleton("DisplayServer")
        .map(|mut ds| ds.call("get_name", &[]).to_string())
        .unwrap_or_else(|| "none".into())
}

/// Whether this Godot draws anything a screenshot could read.
pub(crate) fn has_renderer() -> bool {
    display_server() != "headless"
}

/// Why an image could not be encoded.
pub(crate) enum EncodeError {
    /// The PNG is larger than the caller accepts; `bytes` is its size.
    TooLarge {
        bytes: usize,
        width: i32,
        height: i32,
    },
}

/// `image`, downscaled so its longer edge is at most `max_edge`, as a PNG: `{png_base64,
/// width, height, bytes}`. Refused above `max_bytes` (the message suggests `max_edge`).
pub(crate) fn encode(
    mut image: Gd<Image>,
    max_edge: Option<u32>,
    max_bytes: Option<usize>,
) -> Result<Json, EncodeError> {
    let (w, h) = (image.get_width(), image.get_height());
    let (tw, th) = fit_within(w.max(0) as u32, h.max(0) as u32, max_edge);
    if (tw as i32, th as i32) != (w, h) {
        image
            .resize_ex(tw as i32, th as i32)
            .interpolation(Interpolation::BILINEAR)
            .done();
    }
    let png = image.save_png_to_buffer();
    let (width, height) = (image.get_width(), image.get_height());
    if let Some(max) = max_bytes
        && png.len() > max
    {
        return Err(EncodeError::TooLarge {
            bytes: png.len(),
            width,
            height,
        });
    }
    let b64 = Marshalls::singleton().raw_to_base64(&png);
    Ok(
        json!({"png_base64": b64.to_string(), "width": width, "height": height,
        "bytes": png.len()}),
    )
}

fn viewport_of(view: ScreenshotView) -> Option<Gd<Viewport>> {
    let editor = EditorInterface::singleton();
    match view {
        ScreenshotView::TwoD => editor.get_editor_viewport_2d().map(|v| v.upcast()),
        ScreenshotView::ThreeD => editor.get_editor_viewport_3d().map(|v| v.upcast()),
        ScreenshotView::Window => editor.get_base_control().and_then(|c| c.get_viewport()),
    }
}

/// Whether `viewport` is on screen and laid out: a 2D or 3D view whose editor is not the
/// main screen is neither drawn nor sized (it stays 2×2).
fn showing(viewport: &Gd<Viewport>) -> bool {
    let on_screen = viewport
        .get_parent()
        .and_then(|p| p.try_cast::<CanvasItem>().ok())
        .is_none_or(|c| c.is_visible_in_tree());
    let size = viewport.get_visible_rect().size;
    on_screen && size.x >= 16.0 && size.y >= 16.0
}

fn view_name(view: ScreenshotView) -> &'static str {
    match view {
        ScreenshotView::TwoD => "2d",
        ScreenshotView::ThreeD => "3d",
        ScreenshotView::Window => "window",
    }
}

/// `editor.screenshot`: the last frame the chosen view drew.
/// Pixels of margin around a node a crop keeps.
const CROP_MARGIN: f32 = 16.0;

/// `path`'s bounds on the edited scene's canvas: a Control's rectangle, a node with
/// `get_rect` (Sprite2D, …) that rectangle placed by its global transform, any other
/// CanvasItem a 64×64 square around its origin.
fn canvas_bounds(path: &str) -> Result<Rect2, BridgeError> {
    let not_found = |what: String| {
        BridgeError::new(ErrorCode::NotFound, what).with_effect(ErrorEffect::Unchanged)
    };
    let root = EditorInterface::singleton()
        .get_edited_scene_root()
        .ok_or_else(|| {
            BridgeError::new(ErrorCode::NoActiveScene, "no scene is open in the editor")
                .with_effect(ErrorEffect::Unchanged)
        })?;
    let node: Gd<Node> = if path == "." || path.is_empty() {
        root
    } else {
        root.get_node_or_null(path)
            .ok_or_else(|| not_found(format!("node {path} does not exist in the edited scene")))?
    };
    let item = node.try_cast::<CanvasItem>().map_err(|_| {
        BridgeError::new(
            ErrorCode::InvalidParams,
            format!("{path} is not drawn in 2D (not a CanvasItem)"),
        )
        .with_effect(ErrorEffect::Unchanged)
    })?;
    if let Ok(control) = item.clone().try_cast::<Control>() {
        return Ok(control.get_global_rect());
    }
    let local = if item.has_method("get_rect") {
        item.clone().call("get_rect", &[]).try_to::<Rect2>().ok()
    } else {
        None
    };
    let local =
        local.unwrap_or_else(|| Rect2::new(Vector2::new(-32.0, -32.0), Vector2::new(64.0, 64.0)));
    Ok(item.get_global_transform() * local)
}

pub(crate) fn editor_screenshot(req: ScreenshotRequest) -> Result<Json, BridgeError> {
    if !has_renderer() {
        return Ok(json!({"captured": false, "reason": "no_renderer",
            "display_server": display_server()}));
    }
    let unchanged =
        |code, msg: String| Err(BridgeError::new(code, msg).with_effect(ErrorEffect::Unchanged));
    let Some(viewport) = viewport_of(req.view) else {
        return unchanged(
            ErrorCode::NotFound,
            format!("the editor has no {} view", view_name(req.view)),
        );
    };
    if !showing(&viewport) {
        // Bring that editor up, as a person would click its tab; it draws on a later
        // frame, so this answer says to ask again (the server does).
        let screen = match req.view {
            ScreenshotView::ThreeD => "3D",
            _ => "2D",
        };
        EditorInterface::singleton().set_main_screen_editor(screen);
        return Ok(json!({"captured": false, "reason": "not_ready", "view": view_name(req.view)}));
    }
    let Some(image) = viewport.get_texture().and_then(|t| t.get_image()) else {
        return unchanged(
            ErrorCode::Failed,
            format!("the {} view has no image yet", view_name(req.view)),
        );
    };
    let canvas = viewport.get_global_canvas_transform();
    // A crop to a node: its bounds in the view, with a margin, inside the image.
    let mut crop = None;
    let mut image = image;
    if let Some(path) = &req.node {
        let r = canvas * canvas_bounds(path)?;
        let (x0, y0) = (
            (r.position.x - CROP_MARGIN).max(0.0),
            (r.position.y - CROP_MARGIN).max(0.0),
        );
        let x1 = (r.position.x + r.size.x + CROP_MARGIN).min(image.get_width() as f32);
        let y1 = (r.position.y + r.size.y + CROP_MARGIN).min(image.get_height() as f32);
        if x1 - x0 < 1.0 || y1 - y0 < 1.0 {
            return Ok(json!({"captured": false, "reason": "outside_view", "node": path}));
        }
        let region = Rect2i::new(
            Vector2i::new(x0.floor() as i32, y0.floor() as i32),
            Vector2i::new(
                (x1 - x0.floor()).ceil() as i32,
                (y1 - y0.floor()).ceil() as i32,
            ),
        );
        let Some(part) = image.get_region(region) else {
            return unchanged(
                ErrorCode::Failed,
                format!("could not crop the view to {path}"),
            );
        };
        image = part;
        crop = Some(region);
    }
    // Scale of the capture against the view (to map view pixels to image pixels).
    let full_width = image.get_width();
    match encode(image, req.max_edge, Some(req.max_bytes)) {
        Ok(mut out) => {
            out["captured"] = json!(true);
            out["view"] = json!(view_name(req.view));
            if req.view == ScreenshotView::TwoD {
                // Where the edited scene's canvas lies in the view: a point p of the scene
                // (global coordinates) is at pixel `x_axis * p.x + y_axis * p.y + origin`,
                // times `scale` in the image.
                // A crop moves the origin by the crop's corner.
                let t = canvas;
                let (cx, cy) =
                    crop.map_or((0.0, 0.0), |c| (c.position.x as f32, c.position.y as f32));
                out["canvas_transform"] = json!({
                    "x_axis": [t.a.x, t.a.y], "y_axis": [t.b.x, t.b.y],
                    "origin": [t.origin.x - cx, t.origin.y - cy],
                });
                if let Some(c) = crop {
                    out["crop"] = json!([c.position.x, c.position.y, c.size.x, c.size.y]);
                }
            }
            let w = out["width"].as_f64().unwrap_or(0.0);
            out["scale"] = json!(if full_width > 0 {
                w / f64::from(full_width)
            } else {
                1.0
            });
            Ok(out)
        }
        // Like no_renderer, an answer the server words (TOO_LARGE, with its own cap).
        Err(EncodeError::TooLarge {
            bytes,
            width,
            height,
        }) => Ok(
            json!({"captured": false, "reason": "too_large", "bytes": bytes,
            "width": width, "height": height}),
        ),
    }
}
