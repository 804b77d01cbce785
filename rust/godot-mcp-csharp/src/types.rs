//! A C# type as the Godot type it marshals to: Godot's `MarshalUtils.ConvertManagedTypeToMarshalType`
//! and `ConvertMarshalTypeToVariantType` (modules/mono/editor/Godot.NET.Sdk/
//! Godot.SourceGenerators/MarshalUtils.cs), read from the type as written — without a
//! compilation, a type this file does not know (a class of the engine or of the project)
//! is taken for a `GodotObject` type: `Object` with its class name.

use schemars::JsonSchema;
use serde::Serialize;

/// The Godot type of an exported member or a signal parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VariantType {
    /// Godot's name of the Variant type: `int`, `float`, `String`, `Vector2`,
    /// `PackedStringArray`, `Array`, `Dictionary`, `Object`, `Variant` (any)…
    #[serde(rename = "type")]
    pub variant: String,
    /// `Object`: the class (`PackedScene`, `Node2D`, a project class); `int`: the C# enum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_name: Option<String>,
    /// A typed `Array<T>`'s element, or a `T[]` of objects: its Godot type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
}

impl VariantType {
    fn plain(v: &str) -> Self {
        Self {
            variant: v.to_string(),
            class_name: None,
            element: None,
        }
    }
}

/// The last segment of a possibly qualified name, without `global::`: `Godot.Node2D` →
/// `Node2D`.
pub(crate) fn simple_name(t: &str) -> &str {
    let t = t.strip_prefix("global::").unwrap_or(t);
    t.rsplit('.').next().unwrap_or(t)
}

fn scalar(t: &str) -> Option<&'static str> {
    Some(match t {
        "bool" | "Boolean" => "bool",
        "char" | "sbyte" | "short" | "int" | "long" | "byte" | "ushort" | "uint" | "ulong"
        | "Char" | "SByte" | "Int16" | "Int32" | "Int64" | "Byte" | "UInt16" | "UInt32"
        | "UInt64" => "int",
        "float" | "double" | "Single" | "Double" => "float",
        "string" | "String" => "String",
        "Vector2" | "Vector2I" | "Rect2" | "Rect2I" | "Transform2D" | "Vector3" | "Vector3I"
        | "Basis" | "Quaternion" | "Transform3D" | "Vector4" | "Vector4I" | "Projection"
        | "Color" | "Plane" | "Callable" | "Signal" | "StringName" | "NodePath" => {
            // Godot spells these as C# does.
            return Some(match t {
                "Vector2" => "Vector2",
                "Vector2I" => "Vector2i",
                "Rect2" => "Rect2",
                "Rect2I" => "Rect2i",
                "Transform2D" => "Transform2D",
                "Vector3" => "Vector3",
                "Vector3I" => "Vector3i",
                "Basis" => "Basis",
                "Quaternion" => "Quaternion",
                "Transform3D" => "Transform3D",
                "Vector4" => "Vector4",
                "Vector4I" => "Vector4i",
                "Projection" => "Projection",
                "Color" => "Color",
                "Plane" => "Plane",
                "Callable" => "Callable",
                "Signal" => "Signal",
                "StringName" => "StringName",
                _ => "NodePath",
            });
        }
        "Aabb" => "AABB",
        "Rid" => "RID",
        "Variant" => "Variant",
        _ => return None,
    })
}

fn packed(elem: &str) -> Option<&'static str> {
    Some(match elem {
        "byte" | "Byte" => "PackedByteArray",
        "int" | "Int32" => "PackedInt32Array",
        "long" | "Int64" => "PackedInt64Array",
        "float" | "Single" => "PackedFloat32Array",
        "double" | "Double" => "PackedFloat64Array",
        "string" | "String" => "PackedStringArray",
        "Vector2" => "PackedVector2Array",
        "Vector3" => "PackedVector3Array",
        "Vector4" => "PackedVector4Array",
        "Color" => "PackedColorArray",
        _ => return None,
    })
}

/// The top-level generic arguments of `Name<A, B<C>>`: (`Name`, [`A`, `B<C>`]).
fn generic(t: &str) -> Option<(&str, Vec<&str>)> {
    let open = t.find('<')?;
    let inner = t.strip_suffix('>')?.get(open + 1..)?;
    let (mut depth, mut start, mut args) = (0usize, 0usize, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                args.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(inner[start..].trim());
    Some((&t[..open], args))
}

/// The Godot type of C# type `t` (as written; whitespace is ignored). `is_enum(name)`
/// says whether a simple name is an enum this file declares.
pub fn variant_of(t: &str, is_enum: &dyn Fn(&str) -> bool) -> VariantType {
    let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    let t = compact.trim_end_matches('?');
    if let Some(elem) = t.strip_suffix("[]") {
        let elem = elem.trim_end_matches('?');
        if let Some(p) = packed(simple_name(elem)) {
            return VariantType::plain(p);
        }
        // StringName[], NodePath[], Rid[] and GodotObject[] are Arrays.
        let e = variant_of(elem, is_enum);
        return VariantType {
            variant: "Array".into(),
            class_name: None,
            element: Some(e.class_name.unwrap_or(e.variant)),
        };
    }
    if let Some((name, args)) = generic(t) {
        return match simple_name(name) {
            "Array" => VariantType {
                variant: "Array".into(),
                class_name: None,
                element: args.first().map(|a| {
                    let e = variant_of(a, is_enum);
                    e.class_name.unwrap_or(e.variant)
                }),
            },
            "Dictionary" => VariantType::plain("Dictionary"),
            "Nullable" => args
                .first()
                .map_or_else(|| VariantType::plain("Variant"), |a| variant_of(a, is_enum)),
            // A generic class of the project or the engine.
            other => VariantType {
                variant: "Object".into(),
                class_name: Some(other.to_string()),
                element: None,
            },
        };
    }
    let name = simple_name(t);
    if let Some(s) = scalar(name) {
        // `System.String` and `Godot.Vector2` alike; a bare `String` is System.String.
        return VariantType::plain(s);
    }
    match name {
        "Array" => return VariantType::plain("Array"),
        "Dictionary" => return VariantType::plain("Dictionary"),
        _ => {}
    }
    if is_enum(name) {
        return VariantType {
            variant: "int".into(),
            class_name: Some(name.to_string()),
            element: None,
        };
    }
    VariantType {
        variant: "Object".into(),
        class_name: Some(name.to_string()),
        element: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(t: &str) -> VariantType {
        variant_of(t, &|n| n == "Mode")
    }

    #[test]
    fn marshal_types() {
        assert_eq!(v("int").variant, "int");
        assert_eq!(v("System.Int64").variant, "int");
        assert_eq!(v("double").variant, "float");
        assert_eq!(v("string").variant, "String");
        assert_eq!(v("Godot.Vector2I").variant, "Vector2i");
        assert_eq!(v("Aabb").variant, "AABB");
        assert_eq!(v("byte[]").variant, "PackedByteArray");
        assert_eq!(v("string[]").variant, "PackedStringArray");
        assert_eq!(v("Vector3[]").variant, "PackedVector3Array");
        let a = v("Node[]");
        assert_eq!(
            (a.variant.as_str(), a.element.as_deref()),
            ("Array", Some("Node"))
        );
        let a = v("Godot.Collections.Array<PackedScene>");
        assert_eq!(
            (a.variant.as_str(), a.element.as_deref()),
            ("Array", Some("PackedScene"))
        );
        assert_eq!(
            v("Godot.Collections.Dictionary<string, int>").variant,
            "Dictionary"
        );
        let o = v("PackedScene");
        assert_eq!(
            (o.variant.as_str(), o.class_name.as_deref()),
            ("Object", Some("PackedScene"))
        );
        let e = v("Mode");
        assert_eq!(
            (e.variant.as_str(), e.class_name.as_deref()),
            ("int", Some("Mode"))
        );
        assert_eq!(v("int?").variant, "int");
        assert_eq!(v("Variant").variant, "Variant");
    }
}
