//! The settings Godot declares with a type JSON cannot say by itself (a Color, a vector, a
//! packed array), from `ProjectSettings` in the class reference of Godot 4.4.1 and 4.6.0
//! (`godot --doctool`). Every other engine setting is a String, int, float, bool, Array or
//! Dictionary, which plain JSON already is. A table, not a doctool run: reading it costs
//! nothing, where building the class reference took an agent's first `set_setting` 27 s.
//! `real_godot_the_settings_table_is_the_engines` (tests/classref.rs) checks it against the
//! doctool of every engine the suite runs.

/// `(setting, type)`, sorted by setting.
pub const DECLARED_SETTING_TYPES: &[(&str, &str)] = &[
    ("application/boot_splash/bg_color", "Color"),
    ("debug/canvas_items/debug_redraw_color", "Color"),
    ("debug/shapes/avoidance/2d/agents_radius_color", "Color"),
    ("debug/shapes/avoidance/2d/obstacles_radius_color", "Color"),
    (
        "debug/shapes/avoidance/2d/obstacles_static_edge_pushin_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/2d/obstacles_static_edge_pushout_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/2d/obstacles_static_face_pushin_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/2d/obstacles_static_face_pushout_color",
        "Color",
    ),
    ("debug/shapes/avoidance/3d/agents_radius_color", "Color"),
    ("debug/shapes/avoidance/3d/obstacles_radius_color", "Color"),
    (
        "debug/shapes/avoidance/3d/obstacles_static_edge_pushin_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/3d/obstacles_static_edge_pushout_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/3d/obstacles_static_face_pushin_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/3d/obstacles_static_face_pushout_color",
        "Color",
    ),
    ("debug/shapes/avoidance/agents_radius_color", "Color"),
    ("debug/shapes/avoidance/obstacles_radius_color", "Color"),
    (
        "debug/shapes/avoidance/obstacles_static_edge_pushin_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/obstacles_static_edge_pushout_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/obstacles_static_face_pushin_color",
        "Color",
    ),
    (
        "debug/shapes/avoidance/obstacles_static_face_pushout_color",
        "Color",
    ),
    ("debug/shapes/collision/contact_color", "Color"),
    ("debug/shapes/collision/shape_color", "Color"),
    ("debug/shapes/navigation/2d/agent_path_color", "Color"),
    ("debug/shapes/navigation/2d/edge_connection_color", "Color"),
    ("debug/shapes/navigation/2d/geometry_edge_color", "Color"),
    (
        "debug/shapes/navigation/2d/geometry_edge_disabled_color",
        "Color",
    ),
    ("debug/shapes/navigation/2d/geometry_face_color", "Color"),
    (
        "debug/shapes/navigation/2d/geometry_face_disabled_color",
        "Color",
    ),
    ("debug/shapes/navigation/2d/link_connection_color", "Color"),
    (
        "debug/shapes/navigation/2d/link_connection_disabled_color",
        "Color",
    ),
    ("debug/shapes/navigation/3d/agent_path_color", "Color"),
    ("debug/shapes/navigation/3d/edge_connection_color", "Color"),
    ("debug/shapes/navigation/3d/geometry_edge_color", "Color"),
    (
        "debug/shapes/navigation/3d/geometry_edge_disabled_color",
        "Color",
    ),
    ("debug/shapes/navigation/3d/geometry_face_color", "Color"),
    (
        "debug/shapes/navigation/3d/geometry_face_disabled_color",
        "Color",
    ),
    ("debug/shapes/navigation/3d/link_connection_color", "Color"),
    (
        "debug/shapes/navigation/3d/link_connection_disabled_color",
        "Color",
    ),
    ("debug/shapes/navigation/agent_path_color", "Color"),
    ("debug/shapes/navigation/edge_connection_color", "Color"),
    ("debug/shapes/navigation/geometry_edge_color", "Color"),
    (
        "debug/shapes/navigation/geometry_edge_disabled_color",
        "Color",
    ),
    ("debug/shapes/navigation/geometry_face_color", "Color"),
    (
        "debug/shapes/navigation/geometry_face_disabled_color",
        "Color",
    ),
    ("debug/shapes/navigation/link_connection_color", "Color"),
    (
        "debug/shapes/navigation/link_connection_disabled_color",
        "Color",
    ),
    ("debug/shapes/paths/geometry_color", "Color"),
    ("display/mouse_cursor/custom_image_hotspot", "Vector2"),
    ("display/mouse_cursor/tooltip_position_offset", "Vector2"),
    ("display/window/size/initial_position", "Vector2i"),
    (
        "editor/script/search_in_file_extensions",
        "PackedStringArray",
    ),
    ("navigation/3d/default_up", "Vector3"),
    ("physics/2d/default_gravity_vector", "Vector2"),
    ("physics/3d/default_gravity_vector", "Vector3"),
    (
        "rendering/environment/defaults/default_clear_color",
        "Color",
    ),
];

/// The type Godot declares for the setting `name`, when JSON cannot say it by itself.
pub(crate) fn declared_type(name: &str) -> Option<&'static str> {
    DECLARED_SETTING_TYPES
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| DECLARED_SETTING_TYPES[i].1)
}
