//! `Variant` ⇄ the bridge's JSON value form ([`godot_mcp_editor_core::value::Value`]).
//! The rules live in the core crate (unit-tested without Godot); this is the mapping.
//! Main thread only: loading a resource touches Godot objects.

use godot::classes::{ClassDb, Resource, ResourceLoader};
use godot::prelude::*;
use godot_mcp_editor_core::value::Value;

/// A Godot value for `v`; a resource path that does not load is an error.
pub(crate) fn to_variant(v: &Value) -> Result<Variant, String> {
    Ok(match v {
        Value::Nil => Variant::nil(),
        Value::Bool(b) => b.to_variant(),
        Value::Int(i) => i.to_variant(),
        Value::Float(f) => f.to_variant(),
        Value::String(s) => GString::from(s.as_str()).to_variant(),
        Value::Vector2([x, y]) => Vector2::new(*x as f32, *y as f32).to_variant(),
        Value::Vector3([x, y, z]) => Vector3::new(*x as f32, *y as f32, *z as f32).to_variant(),
        Value::Color([r, g, b, a]) => {
            Color::from_rgba(*r as f32, *g as f32, *b as f32, *a as f32).to_variant()
        }
        Value::NodePath(p) => NodePath::from(p.as_str()).to_variant(),
        Value::Transform2D { x, y, origin } => {
            Transform2D::from_cols(v2(x), v2(y), v2(origin)).to_variant()
        }
        Value::Transform3D { basis, origin } => Transform3D::new(
            Basis::from_cols(v3(&basis[0]), v3(&basis[1]), v3(&basis[2])),
            v3(origin),
        )
        .to_variant(),
        Value::Resource(path) => {
            let res = ResourceLoader::singleton()
                .load(path.as_str())
                .ok_or_else(|| format!("resource {path} could not be loaded"))?;
            res.to_variant()
        }
        Value::Array(items) => {
            let mut a = VarArray::new();
            for item in items {
                a.push(&to_variant(item)?);
            }
            a.to_variant()
        }
        Value::Dictionary(entries) => {
            let mut d = VarDictionary::new();
            for (k, item) in entries {
                d.set(&GString::from(k.as_str()).to_variant(), &to_variant(item)?);
            }
            d.to_variant()
        }
    })
}

fn v2(a: &[f64; 2]) -> Vector2 {
    Vector2::new(a[0] as f32, a[1] as f32)
}

fn v3(a: &[f64; 3]) -> Vector3 {
    Vector3::new(a[0] as f32, a[1] as f32, a[2] as f32)
}

fn f2(v: Vector2) -> [f64; 2] {
    [v.x as f64, v.y as f64]
}

fn f3(v: Vector3) -> [f64; 3] {
    [v.x as f64, v.y as f64, v.z as f64]
}

/// The JSON form of a Godot value; types without a JSON form become their text
/// (`{"$type": "Text"…}` is not invented: they are reported as strings).
pub(crate) fn from_variant(v: &Variant) -> Value {
    let t = v.get_type();
    if t == VariantType::NIL {
        Value::Nil
    } else if t == VariantType::BOOL {
        Value::Bool(v.to::<bool>())
    } else if t == VariantType::INT {
        Value::Int(v.to::<i64>())
    } else if t == VariantType::FLOAT {
        Value::Float(v.to::<f64>())
    } else if t == VariantType::STRING || t == VariantType::STRING_NAME {
        Value::String(v.to_string())
    } else if t == VariantType::VECTOR2 {
        Value::Vector2(f2(v.to::<Vector2>()))
    } else if t == VariantType::VECTOR3 {
        Value::Vector3(f3(v.to::<Vector3>()))
    } else if t == VariantType::COLOR {
        let c = v.to::<Color>();
        Value::Color([c.r as f64, c.g as f64, c.b as f64, c.a as f64])
    } else if t == VariantType::NODE_PATH {
        Value::NodePath(v.to::<NodePath>().to_string())
    } else if t == VariantType::TRANSFORM2D {
        let m = v.to::<Transform2D>();
        Value::Transform2D {
            x: f2(m.a),
            y: f2(m.b),
            origin: f2(m.origin),
        }
    } else if t == VariantType::TRANSFORM3D {
        let m = v.to::<Transform3D>();
        let cols = m.basis.to_cols();
        Value::Transform3D {
            basis: [f3(cols[0]), f3(cols[1]), f3(cols[2])],
            origin: f3(m.origin),
        }
    } else if t == VariantType::OBJECT {
        match v.try_to::<Gd<Resource>>() {
            Ok(r)
                if !r.get_path().is_empty()
                    && r.get_path().to_string().starts_with("res://")
                    && !r.get_path().to_string().contains("::") =>
            {
                Value::Resource(r.get_path().to_string())
            }
            Ok(r) => Value::String(format!("<{} (embedded)>", r.get_class())),
            Err(_) => Value::String(format!("<{}>", object_class(v))),
        }
    } else if t == VariantType::ARRAY {
        Value::Array(
            v.to::<VarArray>()
                .iter_shared()
                .map(|i| from_variant(&i))
                .collect(),
        )
    } else if t == VariantType::DICTIONARY {
        Value::Dictionary(
            v.to::<VarDictionary>()
                .iter_shared()
                .map(|(k, val)| (k.to_string(), from_variant(&val)))
                .collect(),
        )
    } else {
        Value::String(v.to_string())
    }
}

fn object_class(v: &Variant) -> String {
    match v.try_to::<Gd<Object>>() {
        Ok(o) => o.get_class().to_string(),
        Err(_) => "Object".into(),
    }
}

/// Whether `class` names a Node class this engine can instantiate.
pub(crate) fn instantiable_node_class(class: &str) -> bool {
    let db = ClassDb::singleton();
    let name = StringName::from(class);
    db.class_exists(&name) && db.can_instantiate(&name) && db.is_parent_class(&name, "Node")
}
