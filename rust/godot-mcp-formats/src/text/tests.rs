use super::*;

#[test]
fn values_parse_to_their_typed_view() {
    assert_eq!(parse_value("42").unwrap(), Literal::Int(42));
    assert_eq!(parse_value("-1.5e3").unwrap(), Literal::Float(-1500.0));
    assert_eq!(
        parse_value("-inf").unwrap(),
        Literal::Float(f64::NEG_INFINITY)
    );
    assert!(matches!(parse_value("nan").unwrap(), Literal::Float(f) if f.is_nan()));
    assert_eq!(
        parse_value(r#""a\"b\n\u00e9\uD83D\uDE00""#).unwrap(),
        Literal::String("a\"b\né😀".into())
    );
    assert_eq!(
        parse_value(r#"&"idle""#).unwrap(),
        Literal::StringName("idle".into())
    );
    assert_eq!(
        parse_value(r#"NodePath("A/B")"#).unwrap(),
        Literal::NodePath("A/B".into())
    );
    assert_eq!(
        parse_value("Vector2(1, -2.5)").unwrap(),
        Literal::Constructor {
            name: "Vector2".into(),
            args: vec![Literal::Int(1), Literal::Float(-2.5)]
        }
    );
    assert_eq!(
        parse_value("Array[int]([1, 2,])").unwrap(),
        Literal::Constructor {
            name: "Array[int]".into(),
            args: vec![Literal::Array(vec![Literal::Int(1), Literal::Int(2)])]
        }
    );
    let d = parse_value("{\n\"a\": [1, {}],\n2: null\n}").unwrap();
    assert_eq!(d.dict_get("a").unwrap().as_array().unwrap().len(), 2);
}

#[test]
fn wrong_arity_and_unknown_identifiers_are_errors() {
    let e = parse_value("Vector2(1, 2, 3)").unwrap_err();
    assert_eq!((e.kind(), e.line(), e.column()), (ErrorKind::Syntax, 1, 1));
    let e = parse_value("[1, banana]").unwrap_err();
    assert_eq!((e.kind(), e.column()), (ErrorKind::Syntax, 5));
    let e = parse_value("99999999999999999999").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = "[".repeat(100_000);
    assert_eq!(parse_value(&deep).unwrap_err().kind(), ErrorKind::Syntax);
}

#[test]
fn json_of_non_finite_floats_is_the_value_models() {
    let v = crate::variant::from_variant_text("inf");
    assert_eq!(
        v.to_json(),
        serde_json::json!({"$type": "float", "value": "inf"})
    );
}
