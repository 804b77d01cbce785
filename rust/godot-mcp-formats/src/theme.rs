//! A `Theme` resource: its defaults and, per theme type, the items Godot stores as
//! `<Type>/<kind>/<name>` (`colors`, `constants`, `fonts`, `font_sizes`, `icons`,
//! `styles`) and `<Type>/base_type` for a type variation (`Theme::_set`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::literal::Literal;
use crate::text::Property;

/// A theme, decoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Theme {
    pub default_base_scale: Option<f64>,
    /// (The parsed text: no JSON form; the value model is `variant::Value`.)
    #[serde(skip)]
    pub default_font: Option<Literal>,
    pub default_font_size: Option<i64>,
    /// By theme type name, sorted.
    pub types: BTreeMap<String, ThemeType>,
}

/// The items of one theme type.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ThemeType {
    /// For a type variation: the type it extends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_type: Option<String>,
    #[serde(skip)]
    pub colors: BTreeMap<String, Literal>,
    #[serde(skip)]
    pub constants: BTreeMap<String, Literal>,
    #[serde(skip)]
    pub fonts: BTreeMap<String, Literal>,
    #[serde(skip)]
    pub font_sizes: BTreeMap<String, Literal>,
    #[serde(skip)]
    pub icons: BTreeMap<String, Literal>,
    #[serde(skip)]
    pub styles: BTreeMap<String, Literal>,
}

/// Decode a `Theme` from its `[resource]` properties.
pub fn parse_theme(props: &[Property]) -> Theme {
    let get = |n: &str| props.iter().find(|p| p.name == n).map(|p| &p.value);
    let mut types: BTreeMap<String, ThemeType> = BTreeMap::new();
    for p in props {
        let mut parts = p.name.splitn(3, '/');
        let (Some(ty), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        let item = parts.next();
        match (kind, item) {
            ("base_type", None) => {
                types.entry(ty.to_string()).or_default().base_type =
                    p.value.as_str().map(str::to_string);
            }
            (kind, Some(item)) => {
                let t = types.entry(ty.to_string()).or_default();
                let map = match kind {
                    "colors" => &mut t.colors,
                    "constants" => &mut t.constants,
                    "fonts" => &mut t.fonts,
                    "font_sizes" => &mut t.font_sizes,
                    "icons" => &mut t.icons,
                    "styles" => &mut t.styles,
                    _ => continue,
                };
                map.insert(item.to_string(), p.value.clone());
            }
            _ => {}
        }
    }
    Theme {
        default_base_scale: get("default_base_scale").and_then(Literal::as_f64),
        default_font: get("default_font").cloned(),
        default_font_size: get("default_font_size").and_then(Literal::as_int),
        types,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_item_kind_godot_wrote() {
        let res = crate::parse_resource(include_str!("../../../tests/fixtures/readfam/theme.tres"))
            .unwrap();
        let t = parse_theme(&res.properties);
        assert_eq!(t.default_font_size, Some(18));
        let names: Vec<_> = t.types.keys().map(String::as_str).collect();
        assert_eq!(names, ["Button", "CheckBox", "DangerButton", "Label"]);
        let button = &t.types["Button"];
        assert_eq!(button.constants["h_separation"], Literal::Int(7));
        assert!(matches!(button.styles["normal"], Literal::SubResource(_)));
        assert!(button.colors.contains_key("font_color"));
        assert_eq!(t.types["DangerButton"].base_type.as_deref(), Some("Button"));
        let label = &t.types["Label"];
        assert_eq!(label.font_sizes["font_size"], Literal::Int(22));
        assert!(matches!(label.fonts["font"], Literal::SubResource(_)));
        assert!(matches!(
            t.types["CheckBox"].icons["checked"],
            Literal::ExtResource(_)
        ));
    }
}
