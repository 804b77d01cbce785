//! `Variant` ⇄ the bridge's JSON value form ([`godot_mcp_editor_core::value::Value`]).
//! The rules live in the core crate (unit-tested without Godot); this is the mapping.
//! Main thread only: loading a resource touches Godot objects.

use godot::classes::{ClassDb, Resource, ResourceLoader};
use godot::prelude::*;
use godot_mcp_editor_core::coerce::{self, Declared};
use godot_mcp_editor_core::value::{self, MAX_RESOURCE_DEPTH, Value, real};

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
            let mut loader = ResourceLoader::singleton();
            if !loader.exists(path.as_str()) {
                return Err(format!("{path} does not exist (no such resource file)"));
            }
            let res = loader
                .load(path.as_str())
                .ok_or_else(|| format!("resource {path} could not be loaded"))?;
            res.to_variant()
        }
        Value::NewResource { class, properties } => new_resource(class, properties)?.to_variant(),
        Value::Vector2i([x, y]) => Vector2i::new(i32v(*x)?, i32v(*y)?).to_variant(),
        Value::Vector3i([x, y, z]) => Vector3i::new(i32v(*x)?, i32v(*y)?, i32v(*z)?).to_variant(),
        Value::Rect2 { position, size } => Rect2::new(v2(position), v2(size)).to_variant(),
        Value::Rect2i { position, size } => Rect2i::new(
            Vector2i::new(i32v(position[0])?, i32v(position[1])?),
            Vector2i::new(i32v(size[0])?, i32v(size[1])?),
        )
        .to_variant(),
        Value::Quaternion([x, y, z, w]) => {
            Quaternion::new(*x as f32, *y as f32, *z as f32, *w as f32).to_variant()
        }
        Value::PackedVector2Array(items) => items
            .iter()
            .map(v2)
            .collect::<PackedVector2Array>()
            .to_variant(),
        Value::PackedVector3Array(items) => items
            .iter()
            .map(v3)
            .collect::<PackedVector3Array>()
            .to_variant(),
        Value::PackedFloat32Array(items) => items
            .iter()
            .map(|f| *f as f32)
            .collect::<PackedFloat32Array>()
            .to_variant(),
        Value::PackedInt32Array(items) => items
            .iter()
            .map(|i| i32v(*i))
            .collect::<Result<PackedInt32Array, _>>()?
            .to_variant(),
        Value::PackedColorArray(items) => items
            .iter()
            .map(|[r, g, b, a]| Color::from_rgba(*r as f32, *g as f32, *b as f32, *a as f32))
            .collect::<PackedColorArray>()
            .to_variant(),
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
        // Godot's own Variant parser reads the text; text it cannot read is refused,
        // not set as null.
        Value::Raw(text) => parse_variant_text(text)?,
        // The types the model holds in the same layout as Godot's Variant text
        // (Vector4, AABB, Basis, packed arrays, typed collections, …): through that text.
        other => {
            let text = value::to_text(other)
                .ok_or_else(|| "this value has no Godot Variant text".to_string())?;
            parse_variant_text(&text)?
        }
    })
}

fn parse_variant_text(text: &str) -> Result<Variant, String> {
    let v = godot::global::str_to_var(text);
    if v.is_nil() && text.trim() != "null" {
        return Err(format!("{text:?} is not a Godot Variant text"));
    }
    Ok(v)
}

/// Godot's Variant text of `v` read as the disk plane reads a file's value: the same
/// typed form for the same value (`AABB(…)`, `PackedStringArray(…)`, `Array[int]([…])`),
/// `Raw` only for what the model does not type.
fn from_godot_text(v: &Variant) -> Value {
    value::from_variant_text(&godot::global::var_to_str(v).to_string())
}

fn i32v(i: i64) -> Result<i32, String> {
    i32::try_from(i).map_err(|_| format!("{i} does not fit Godot's 32-bit int"))
}

/// Whether `o` has a property named `property` (an entry of its property list).
pub(crate) fn has_property(o: &Gd<Object>, property: &str) -> bool {
    declared(o, property).is_some()
}

thread_local! {
    /// The properties ClassDB registers for a class and its ancestors, with their
    /// declared types, by class, read once per class on the main thread. An engine
    /// class's never change; a class of another GDExtension could gain or lose
    /// properties if that extension is hot-reloaded, which this cache would not see
    /// until the editor restarts.
    static REGISTERED: std::cell::RefCell<std::collections::HashMap<String, std::collections::HashMap<String, Declared>>> =
        Default::default();
}

/// Godot's PROPERTY_USAGE_GROUP, _CATEGORY and _SUBGROUP: an inspector heading, not a
/// property.
const PROPERTY_USAGE_HEADING: i64 = 64 | 128 | 256;

/// A property-list entry's declared type (a heading has no name here). A shader's
/// uniform list has the same entries.
pub(crate) fn declared_of(d: &VarDictionary) -> (String, Declared) {
    let int = |k: &str| d.get(k).and_then(|v| v.try_to::<i64>().ok()).unwrap_or(0);
    let text = |k: &str| d.get(k).map(|v| v.to_string()).unwrap_or_default();
    if int("usage") & PROPERTY_USAGE_HEADING != 0 {
        return (String::new(), Declared::default());
    }
    (
        text("name"),
        Declared::from_property(
            int("type"),
            int("hint"),
            &text("hint_string"),
            &text("class_name"),
        ),
    )
}

/// The type `o.property` declares: its entry in ClassDB's list for `o`'s class (cached:
/// building the object's whole list was most of a `node.set_property`), else in `o`'s
/// own list (script and dynamic properties); `None` when neither lists it.
pub(crate) fn declared(o: &Gd<Object>, property: &str) -> Option<Declared> {
    let class = o.get_class().to_string();
    let registered = REGISTERED.with(|r| {
        let mut r = r.borrow_mut();
        let names = r.entry(class.clone()).or_insert_with(|| {
            ClassDb::singleton()
                .class_get_property_list(class.as_str())
                .iter_shared()
                .map(|d| declared_of(&d))
                .collect()
        });
        names.get(property).cloned()
    });
    if registered.is_some() {
        return registered;
    }
    o.get_property_list()
        .iter_shared()
        .map(|d| declared_of(&d))
        .find(|(name, _)| name == property)
        .map(|(_, d)| d)
}

/// An integer constant of `class` or an ancestor, by name (ClassDB).
fn class_constant(class: &str, name: &str) -> Option<i64> {
    let db = ClassDb::singleton();
    db.class_has_integer_constant(class, name)
        .then(|| db.class_get_integer_constant(class, name))
}

/// The Variant to set `o.property` to for `value`, read by the type the property
/// declares (never by the value it holds now): the one value language of
/// [`godot_mcp_formats::coerce`], then the declared class of a resource checked.
/// `what` names `o` in the message.
pub(crate) fn checked_value(
    o: &Gd<Object>,
    what: &str,
    property: &str,
    value: &Value,
) -> Result<Variant, String> {
    let d = match declared(o, property) {
        // Godot declares the Curve classes' `_data` (their points, as the file stores
        // them) as an int, though it takes and gives a Dictionary (Curve2D/3D) or an
        // Array (Curve): read as that, so what get_node_property returns can be set
        // back and Godot's text of it (`{ "points": PackedVector2Array(…) }`) is parsed;
        // the read-back decides.
        Some(d) if property == "_data" && d.ty == "int" => Declared::of(if o.is_class("Curve") {
            "Array"
        } else {
            "Dictionary"
        }),
        Some(d) => d,
        // A property Godot creates on set (`layer_1/name`, `physics_layer_0/…`,
        // `point_0/position`): taken as sent; the read-back decides (it must be listed
        // then, and hold the value).
        None if property.contains('/') => Declared::of("Nil"),
        None => {
            return Err(format!(
                "{what} ({}) has no property {property}",
                o.get_class()
            ));
        }
    };
    let class = o.get_class().to_string();
    let value = &coerce::nested_resources(&class, property, value);
    let constant = |name: &str| class_constant(&class, name);
    let v = if d.ty == "Dictionary" {
        // Its entries by the types the property holds now at the same keys (Curve2D's
        // `_data` holds `points` as a PackedVector2Array): Godot's text and our forms of
        // them are read as they are for a property (run 11: the points as
        // "PackedVector2Array(…)" text came back empty).
        coerce::coerce_entries(value, &held_entry_types(&o.get(property)), &constant)
    } else {
        coerce::coerce(value, &d, &constant)
    }
    .map_err(|e| format!("{what}:{property}: {e}"))?;
    let var = to_variant(&v).map_err(|e| format!("{what}:{property}: {e}"))?;
    if d.ty == "Object"
        && !d.classes.is_empty()
        && let Ok(got) = var.try_to::<Gd<Object>>()
        && !d.classes.iter().any(|c| got.is_class(c.as_str()))
    {
        let named = match &v {
            Value::Resource(p) => format!("{p} is a {}", got.get_class()),
            _ => format!("a {}", got.get_class()),
        };
        return Err(format!(
            "{what}:{property} takes a {}; {named}",
            d.classes.join(" or ")
        ));
    }
    Ok(var)
}

/// The Variant type of each String-keyed entry `held` (a Dictionary) has; none when it
/// is not one.
fn held_entry_types(held: &Variant) -> Vec<(String, String)> {
    let Ok(d) = held.try_to::<VarDictionary>() else {
        return Vec::new();
    };
    d.iter_shared()
        .filter_map(|(k, v)| {
            let key = k.try_to::<GString>().ok()?.to_string();
            let ty = coerce::Declared::from_property(v.get_type().ord() as i64, 0, "", "").ty;
            Some((key, ty))
        })
        .collect()
}

/// Whether `held` (what Godot holds after a set) is `asked` (the Variant set), read
/// in the value model, reals compared as 32-bit; the error names both.
pub(crate) fn held_as_asked(asked: &Variant, held: &Variant) -> Result<(), String> {
    let (a, h) = (from_variant(asked), from_variant(held));
    if coerce::same(&a, &h) {
        Ok(())
    } else {
        let part = coerce::what_differs(&a, &h).map_or(String::new(), |p| format!("{p}: "));
        Err(format!(
            "{part}Godot holds {} after it was set to {}",
            h.to_json(),
            a.to_json()
        ))
    }
}

/// [`held_as_asked`] for `o.property` (`a:b` paths through `get_indexed`); a property
/// that was not listed before the set must be listed after it.
pub(crate) fn reads_back(o: &Gd<Object>, property: &str, asked: &Variant) -> Result<(), String> {
    let held = if property.contains(':') {
        o.get_indexed(&NodePath::from(property))
    } else {
        if declared(o, property).is_none() {
            return Err(format!(
                "{property}: {} has no such property, and setting it did not create one",
                o.get_class()
            ));
        }
        o.get(property)
    };
    held_as_asked(asked, &held).map_err(|e| format!("{property}: {e}"))
}

/// A new built-in resource of `class` with `properties` set (each checked like a node
/// property). ClassDB must say the class is an instantiable Resource.
fn new_resource(class: &str, properties: &[(String, Value)]) -> Result<Gd<Resource>, String> {
    let db = ClassDb::singleton();
    let name = StringName::from(class);
    if !(db.class_exists(&name) && db.is_parent_class(&name, "Resource")) {
        return Err(format!("{class} is not a Resource class"));
    }
    if !db.can_instantiate(&name) {
        return Err(format!(
            "{class} is a Resource class that cannot be instantiated"
        ));
    }
    let mut res = db
        .instantiate(&name)
        .try_to::<Gd<Resource>>()
        .map_err(|_| format!("could not create a {class}"))?;
    // Godot's array properties come as `x_count` and `x_N/field` (a Curve2D's
    // `point_count`, `point_0/position`): the count first, so the entries exist when set
    // (a JSON object's keys arrive sorted, and `point_0/…` sorts before `point_count`).
    let mut ordered: Vec<&(String, Value)> = properties.iter().collect();
    ordered.sort_by_key(|(k, _)| !k.ends_with("_count"));
    for (k, value) in ordered {
        let v = checked_value(&res.clone().upcast(), class, k, value)?;
        res.set(k.as_str(), &v);
        reads_back(&res.clone().upcast(), k, &v).map_err(|e| format!("{class}.{e}"))?;
    }
    Ok(res)
}

fn v2(a: &[f64; 2]) -> Vector2 {
    Vector2::new(a[0] as f32, a[1] as f32)
}

fn v3(a: &[f64; 3]) -> Vector3 {
    Vector3::new(a[0] as f32, a[1] as f32, a[2] as f32)
}

/// A 32-bit component as the model holds it (`real`: the shortest decimal), so the
/// editor, the game and a file read report the same number.
fn r(x: f32) -> f64 {
    real(f64::from(x))
}

fn f2(v: Vector2) -> [f64; 2] {
    [r(v.x), r(v.y)]
}

fn f3(v: Vector3) -> [f64; 3] {
    [r(v.x), r(v.y), r(v.z)]
}

fn i2(v: Vector2i) -> [i64; 2] {
    [v.x.into(), v.y.into()]
}

fn rgba(c: Color) -> [f64; 4] {
    [r(c.r), r(c.g), r(c.b), r(c.a)]
}

/// Godot's PROPERTY_USAGE_STORAGE: the property is saved with the resource.
const PROPERTY_USAGE_STORAGE: i64 = 2;

/// A resource saved in its own file reads as its path; a built-in one as its class and
/// the stored properties that differ from the class defaults, `depth` levels deep.
fn resource_value(r: &Gd<Resource>, depth: usize) -> Value {
    let path = r.get_path().to_string();
    if path.starts_with("res://") && !path.contains("::") {
        return Value::Resource(path);
    }
    let class = r.get_class().to_string();
    if depth >= MAX_RESOURCE_DEPTH {
        return Value::String(format!("<{class} (embedded)>"));
    }
    let db = ClassDb::singleton();
    let mut properties = Vec::new();
    for d in r.get_property_list().iter_shared() {
        let usage = d.get("usage").map_or(0, |u| u.to::<i64>());
        if usage & PROPERTY_USAGE_STORAGE == 0 {
            continue;
        }
        let Some(name) = d.get("name").map(|n| n.to_string()) else {
            continue;
        };
        let v = r.get(name.as_str());
        if v == db.class_get_property_default_value(class.as_str(), name.as_str()) {
            continue;
        }
        properties.push((name, value_at(&v, depth + 1)));
    }
    Value::NewResource { class, properties }
}

/// The value model's form of a Godot value; a type the model does not type becomes
/// `Raw` with Godot's Variant text of it.
pub(crate) fn from_variant(v: &Variant) -> Value {
    value_at(v, 0)
}

fn value_at(v: &Variant, depth: usize) -> Value {
    let t = v.get_type();
    if t == VariantType::NIL {
        Value::Nil
    } else if t == VariantType::BOOL {
        Value::Bool(v.to::<bool>())
    } else if t == VariantType::INT {
        Value::Int(v.to::<i64>())
    } else if t == VariantType::FLOAT {
        Value::Float(v.to::<f64>())
    } else if t == VariantType::STRING {
        Value::String(v.to_string())
    } else if t == VariantType::STRING_NAME {
        Value::StringName(v.to_string())
    } else if t == VariantType::VECTOR2 {
        Value::Vector2(f2(v.to::<Vector2>()))
    } else if t == VariantType::VECTOR3 {
        Value::Vector3(f3(v.to::<Vector3>()))
    } else if t == VariantType::COLOR {
        let c = v.to::<Color>();
        Value::Color(rgba(c))
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
            Ok(r) => resource_value(&r, depth),
            Err(_) => Value::String(format!("<{}>", object_class(v))),
        }
    } else if t == VariantType::VECTOR2I {
        Value::Vector2i(i2(v.to::<Vector2i>()))
    } else if t == VariantType::VECTOR3I {
        let p = v.to::<Vector3i>();
        Value::Vector3i([p.x.into(), p.y.into(), p.z.into()])
    } else if t == VariantType::RECT2 {
        let r = v.to::<Rect2>();
        Value::Rect2 {
            position: f2(r.position),
            size: f2(r.size),
        }
    } else if t == VariantType::RECT2I {
        let r = v.to::<Rect2i>();
        Value::Rect2i {
            position: i2(r.position),
            size: i2(r.size),
        }
    } else if t == VariantType::QUATERNION {
        let q = v.to::<Quaternion>();
        Value::Quaternion([r(q.x), r(q.y), r(q.z), r(q.w)])
    } else if t == VariantType::PACKED_VECTOR2_ARRAY {
        Value::PackedVector2Array(
            v.to::<PackedVector2Array>()
                .as_slice()
                .iter()
                .map(|p| f2(*p))
                .collect(),
        )
    } else if t == VariantType::PACKED_VECTOR3_ARRAY {
        Value::PackedVector3Array(
            v.to::<PackedVector3Array>()
                .as_slice()
                .iter()
                .map(|p| f3(*p))
                .collect(),
        )
    } else if t == VariantType::PACKED_FLOAT32_ARRAY {
        Value::PackedFloat32Array(
            v.to::<PackedFloat32Array>()
                .as_slice()
                .iter()
                .map(|f| r(*f))
                .collect(),
        )
    } else if t == VariantType::PACKED_INT32_ARRAY {
        Value::PackedInt32Array(
            v.to::<PackedInt32Array>()
                .as_slice()
                .iter()
                .map(|i| i64::from(*i))
                .collect(),
        )
    } else if t == VariantType::PACKED_COLOR_ARRAY {
        Value::PackedColorArray(
            v.to::<PackedColorArray>()
                .as_slice()
                .iter()
                .map(|c| rgba(*c))
                .collect(),
        )
    } else if t == VariantType::ARRAY && v.to::<AnyArray>().element_type().is_typed() {
        from_godot_text(v)
    } else if t == VariantType::ARRAY {
        Value::Array(
            // AnyArray: typed arrays (Array[PackedVector2Array]) read as arrays too.
            v.to::<AnyArray>()
                .iter_shared()
                .map(|i| value_at(&i, depth + 1))
                .collect(),
        )
    } else if t == VariantType::DICTIONARY && {
        let d = v.to::<AnyDictionary>();
        d.key_element_type().is_typed()
            || d.value_element_type().is_typed()
            || d.keys_array()
                .iter_shared()
                .any(|k| k.get_type() != VariantType::STRING)
    } {
        from_godot_text(v)
    } else if t == VariantType::DICTIONARY {
        Value::Dictionary(
            v.to::<AnyDictionary>()
                .iter_shared()
                .map(|(k, val)| (k.to_string(), value_at(&val, depth + 1)))
                .collect(),
        )
    } else {
        // Vector4, AABB, Plane, Basis, Projection, the other packed arrays: read from
        // Godot's own Variant text of it, the text a saved scene holds; Raw for what
        // the model does not type.
        from_godot_text(v)
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
