//! Colours by text: `#rgb` forms and Godot's named colours.

use crate::variant::real;

/// `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa` (the `#` optional for 6 and 8 digits, as
/// Godot's `Color.html`) or a Godot colour name.
pub fn parse_color(t: &str) -> Option<[f64; 4]> {
    let hex = t.strip_prefix('#');
    let digits = hex.unwrap_or(t);
    let all_hex = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_hexdigit());
    if all_hex && (hex.is_some() || matches!(digits.len(), 6 | 8)) {
        let nib = |i: usize| u8::from_str_radix(&digits[i..=i], 16).ok();
        let byte = |i: usize| u8::from_str_radix(&digits[i..i + 2], 16).ok();
        let c = |v: u8, max: f64| real(f64::from(v) / max);
        return match digits.len() {
            3 | 4 => {
                let a = if digits.len() == 4 { nib(3)? } else { 15 };
                Some([
                    c(nib(0)?, 15.0),
                    c(nib(1)?, 15.0),
                    c(nib(2)?, 15.0),
                    c(a, 15.0),
                ])
            }
            6 | 8 => {
                let a = if digits.len() == 8 { byte(6)? } else { 255 };
                Some([
                    c(byte(0)?, 255.0),
                    c(byte(2)?, 255.0),
                    c(byte(4)?, 255.0),
                    c(a, 255.0),
                ])
            }
            _ => None,
        };
    }
    named_color(t)
}

/// A colour of Godot's named-colour table (`core/math/color_names.inc`), matched as
/// `Color.from_string` matches it: case, spaces, `-`, `_`, `'` and `.` ignored.
pub fn named_color(name: &str) -> Option<[f64; 4]> {
    let key: String = name
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_' | '\'' | '.'))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    NAMED_COLORS
        .iter()
        .find(|(n, _)| n.replace('_', "") == key)
        .map(|(_, [r, g, b, a])| [real(*r), real(*g), real(*b), real(*a)])
}

/// Godot's named colours, from `core/math/color_names.inc` (Godot 4).
pub(super) const NAMED_COLORS: &[(&str, [f64; 4])] = &[
    ("ALICE_BLUE", [0.94, 0.97, 1.00, 1.0]),
    ("ANTIQUE_WHITE", [0.98, 0.92, 0.84, 1.0]),
    ("AQUA", [0.00, 1.00, 1.00, 1.0]),
    ("AQUAMARINE", [0.50, 1.00, 0.83, 1.0]),
    ("AZURE", [0.94, 1.00, 1.00, 1.0]),
    ("BEIGE", [0.96, 0.96, 0.86, 1.0]),
    ("BISQUE", [1.00, 0.89, 0.77, 1.0]),
    ("BLACK", [0.00, 0.00, 0.00, 1.0]),
    ("BLANCHED_ALMOND", [1.00, 0.92, 0.80, 1.0]),
    ("BLUE", [0.00, 0.00, 1.00, 1.0]),
    ("BLUE_VIOLET", [0.54, 0.17, 0.89, 1.0]),
    ("BROWN", [0.65, 0.16, 0.16, 1.0]),
    ("BURLYWOOD", [0.87, 0.72, 0.53, 1.0]),
    ("CADET_BLUE", [0.37, 0.62, 0.63, 1.0]),
    ("CHARTREUSE", [0.50, 1.00, 0.00, 1.0]),
    ("CHOCOLATE", [0.82, 0.41, 0.12, 1.0]),
    ("CORAL", [1.00, 0.50, 0.31, 1.0]),
    ("CORNFLOWER_BLUE", [0.39, 0.58, 0.93, 1.0]),
    ("CORNSILK", [1.00, 0.97, 0.86, 1.0]),
    ("CRIMSON", [0.86, 0.08, 0.24, 1.0]),
    ("CYAN", [0.00, 1.00, 1.00, 1.0]),
    ("DARK_BLUE", [0.00, 0.00, 0.55, 1.0]),
    ("DARK_CYAN", [0.00, 0.55, 0.55, 1.0]),
    ("DARK_GOLDENROD", [0.72, 0.53, 0.04, 1.0]),
    ("DARK_GRAY", [0.66, 0.66, 0.66, 1.0]),
    ("DARK_GREEN", [0.00, 0.39, 0.00, 1.0]),
    ("DARK_KHAKI", [0.74, 0.72, 0.42, 1.0]),
    ("DARK_MAGENTA", [0.55, 0.00, 0.55, 1.0]),
    ("DARK_OLIVE_GREEN", [0.33, 0.42, 0.18, 1.0]),
    ("DARK_ORANGE", [1.00, 0.55, 0.00, 1.0]),
    ("DARK_ORCHID", [0.60, 0.20, 0.80, 1.0]),
    ("DARK_RED", [0.55, 0.00, 0.00, 1.0]),
    ("DARK_SALMON", [0.91, 0.59, 0.48, 1.0]),
    ("DARK_SEA_GREEN", [0.56, 0.74, 0.56, 1.0]),
    ("DARK_SLATE_BLUE", [0.28, 0.24, 0.55, 1.0]),
    ("DARK_SLATE_GRAY", [0.18, 0.31, 0.31, 1.0]),
    ("DARK_TURQUOISE", [0.00, 0.81, 0.82, 1.0]),
    ("DARK_VIOLET", [0.58, 0.00, 0.83, 1.0]),
    ("DEEP_PINK", [1.00, 0.08, 0.58, 1.0]),
    ("DEEP_SKY_BLUE", [0.00, 0.75, 1.00, 1.0]),
    ("DIM_GRAY", [0.41, 0.41, 0.41, 1.0]),
    ("DODGER_BLUE", [0.12, 0.56, 1.00, 1.0]),
    ("FIREBRICK", [0.70, 0.13, 0.13, 1.0]),
    ("FLORAL_WHITE", [1.00, 0.98, 0.94, 1.0]),
    ("FOREST_GREEN", [0.13, 0.55, 0.13, 1.0]),
    ("FUCHSIA", [1.00, 0.00, 1.00, 1.0]),
    ("GAINSBORO", [0.86, 0.86, 0.86, 1.0]),
    ("GHOST_WHITE", [0.97, 0.97, 1.00, 1.0]),
    ("GOLD", [1.00, 0.84, 0.00, 1.0]),
    ("GOLDENROD", [0.85, 0.65, 0.13, 1.0]),
    ("GRAY", [0.75, 0.75, 0.75, 1.0]),
    ("GREEN", [0.00, 1.00, 0.00, 1.0]),
    ("GREEN_YELLOW", [0.68, 1.00, 0.18, 1.0]),
    ("HONEYDEW", [0.94, 1.00, 0.94, 1.0]),
    ("HOT_PINK", [1.00, 0.41, 0.71, 1.0]),
    ("INDIAN_RED", [0.80, 0.36, 0.36, 1.0]),
    ("INDIGO", [0.29, 0.00, 0.51, 1.0]),
    ("IVORY", [1.00, 1.00, 0.94, 1.0]),
    ("KHAKI", [0.94, 0.90, 0.55, 1.0]),
    ("LAVENDER", [0.90, 0.90, 0.98, 1.0]),
    ("LAVENDER_BLUSH", [1.00, 0.94, 0.96, 1.0]),
    ("LAWN_GREEN", [0.49, 0.99, 0.00, 1.0]),
    ("LEMON_CHIFFON", [1.00, 0.98, 0.80, 1.0]),
    ("LIGHT_BLUE", [0.68, 0.85, 0.90, 1.0]),
    ("LIGHT_CORAL", [0.94, 0.50, 0.50, 1.0]),
    ("LIGHT_CYAN", [0.88, 1.00, 1.00, 1.0]),
    ("LIGHT_GOLDENROD", [0.98, 0.98, 0.82, 1.0]),
    ("LIGHT_GRAY", [0.83, 0.83, 0.83, 1.0]),
    ("LIGHT_GREEN", [0.56, 0.93, 0.56, 1.0]),
    ("LIGHT_PINK", [1.00, 0.71, 0.76, 1.0]),
    ("LIGHT_SALMON", [1.00, 0.63, 0.48, 1.0]),
    ("LIGHT_SEA_GREEN", [0.13, 0.70, 0.67, 1.0]),
    ("LIGHT_SKY_BLUE", [0.53, 0.81, 0.98, 1.0]),
    ("LIGHT_SLATE_GRAY", [0.47, 0.53, 0.60, 1.0]),
    ("LIGHT_STEEL_BLUE", [0.69, 0.77, 0.87, 1.0]),
    ("LIGHT_YELLOW", [1.00, 1.00, 0.88, 1.0]),
    ("LIME", [0.00, 1.00, 0.00, 1.0]),
    ("LIME_GREEN", [0.20, 0.80, 0.20, 1.0]),
    ("LINEN", [0.98, 0.94, 0.90, 1.0]),
    ("MAGENTA", [1.00, 0.00, 1.00, 1.0]),
    ("MAROON", [0.69, 0.19, 0.38, 1.0]),
    ("MEDIUM_AQUAMARINE", [0.40, 0.80, 0.67, 1.0]),
    ("MEDIUM_BLUE", [0.00, 0.00, 0.80, 1.0]),
    ("MEDIUM_ORCHID", [0.73, 0.33, 0.83, 1.0]),
    ("MEDIUM_PURPLE", [0.58, 0.44, 0.86, 1.0]),
    ("MEDIUM_SEA_GREEN", [0.24, 0.70, 0.44, 1.0]),
    ("MEDIUM_SLATE_BLUE", [0.48, 0.41, 0.93, 1.0]),
    ("MEDIUM_SPRING_GREEN", [0.00, 0.98, 0.60, 1.0]),
    ("MEDIUM_TURQUOISE", [0.28, 0.82, 0.80, 1.0]),
    ("MEDIUM_VIOLET_RED", [0.78, 0.08, 0.52, 1.0]),
    ("MIDNIGHT_BLUE", [0.10, 0.10, 0.44, 1.0]),
    ("MINT_CREAM", [0.96, 1.00, 0.98, 1.0]),
    ("MISTY_ROSE", [1.00, 0.89, 0.88, 1.0]),
    ("MOCCASIN", [1.00, 0.89, 0.71, 1.0]),
    ("NAVAJO_WHITE", [1.00, 0.87, 0.68, 1.0]),
    ("NAVY_BLUE", [0.00, 0.00, 0.50, 1.0]),
    ("OLD_LACE", [0.99, 0.96, 0.90, 1.0]),
    ("OLIVE", [0.50, 0.50, 0.00, 1.0]),
    ("OLIVE_DRAB", [0.42, 0.56, 0.14, 1.0]),
    ("ORANGE", [1.00, 0.65, 0.00, 1.0]),
    ("ORANGE_RED", [1.00, 0.27, 0.00, 1.0]),
    ("ORCHID", [0.85, 0.44, 0.84, 1.0]),
    ("PALE_GOLDENROD", [0.93, 0.91, 0.67, 1.0]),
    ("PALE_GREEN", [0.60, 0.98, 0.60, 1.0]),
    ("PALE_TURQUOISE", [0.69, 0.93, 0.93, 1.0]),
    ("PALE_VIOLET_RED", [0.86, 0.44, 0.58, 1.0]),
    ("PAPAYA_WHIP", [1.00, 0.94, 0.84, 1.0]),
    ("PEACH_PUFF", [1.00, 0.85, 0.73, 1.0]),
    ("PERU", [0.80, 0.52, 0.25, 1.0]),
    ("PINK", [1.00, 0.75, 0.80, 1.0]),
    ("PLUM", [0.87, 0.63, 0.87, 1.0]),
    ("POWDER_BLUE", [0.69, 0.88, 0.90, 1.0]),
    ("PURPLE", [0.63, 0.13, 0.94, 1.0]),
    ("REBECCA_PURPLE", [0.40, 0.20, 0.60, 1.0]),
    ("RED", [1.00, 0.00, 0.00, 1.0]),
    ("ROSY_BROWN", [0.74, 0.56, 0.56, 1.0]),
    ("ROYAL_BLUE", [0.25, 0.41, 0.88, 1.0]),
    ("SADDLE_BROWN", [0.55, 0.27, 0.07, 1.0]),
    ("SALMON", [0.98, 0.50, 0.45, 1.0]),
    ("SANDY_BROWN", [0.96, 0.64, 0.38, 1.0]),
    ("SEA_GREEN", [0.18, 0.55, 0.34, 1.0]),
    ("SEASHELL", [1.00, 0.96, 0.93, 1.0]),
    ("SIENNA", [0.63, 0.32, 0.18, 1.0]),
    ("SILVER", [0.75, 0.75, 0.75, 1.0]),
    ("SKY_BLUE", [0.53, 0.81, 0.92, 1.0]),
    ("SLATE_BLUE", [0.42, 0.35, 0.80, 1.0]),
    ("SLATE_GRAY", [0.44, 0.50, 0.56, 1.0]),
    ("SNOW", [1.00, 0.98, 0.98, 1.0]),
    ("SPRING_GREEN", [0.00, 1.00, 0.50, 1.0]),
    ("STEEL_BLUE", [0.27, 0.51, 0.71, 1.0]),
    ("TAN", [0.82, 0.71, 0.55, 1.0]),
    ("TEAL", [0.00, 0.50, 0.50, 1.0]),
    ("THISTLE", [0.85, 0.75, 0.85, 1.0]),
    ("TOMATO", [1.00, 0.39, 0.28, 1.0]),
    ("TRANSPARENT", [1.00, 1.00, 1.00, 0.00]),
    ("TURQUOISE", [0.25, 0.88, 0.82, 1.0]),
    ("VIOLET", [0.93, 0.51, 0.93, 1.0]),
    ("WEB_GRAY", [0.50, 0.50, 0.50, 1.0]),
    ("WEB_GREEN", [0.00, 0.50, 0.00, 1.0]),
    ("WEB_MAROON", [0.50, 0.00, 0.00, 1.0]),
    ("WEB_PURPLE", [0.50, 0.00, 0.50, 1.0]),
    ("WHEAT", [0.96, 0.87, 0.70, 1.0]),
    ("WHITE", [1.00, 1.00, 1.00, 1.0]),
    ("WHITE_SMOKE", [0.96, 0.96, 0.96, 1.0]),
    ("YELLOW", [1.00, 1.00, 0.00, 1.0]),
    ("YELLOW_GREEN", [0.60, 0.80, 0.20, 1.0]),
];
