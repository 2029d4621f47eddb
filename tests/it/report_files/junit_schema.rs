//! The JUnit schema of `tests/fixtures/junit/junit.xsd`, checked in process: the XML is parsed with
//! `quick-xml` and every element is held to its type there (which children, in which order and how
//! many; which attributes, which are required, and their value types), so `cargo test` needs no
//! schema validator. `scripts/check_junit_schema` validates the same reports against the XSD itself
//! with xmllint in CI, so the two cannot drift apart unnoticed.

use quick_xml::events::{BytesStart, Event};

/// A parsed element: its name, attributes, child elements and the text directly inside it.
#[derive(Debug)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

/// The value types the schema gives attributes.
#[derive(Clone, Copy)]
enum Value {
    Text,
    /// `xs:nonNegativeInteger`.
    Count,
    /// `xs:decimal`, at least 0.
    Seconds,
    /// `xs:dateTime`.
    DateTime,
}

/// One attribute of a type: name, value type, required.
type Attribute = (&'static str, Value, bool);

/// The children a type allows, in order: names that may stand at that place, and how often.
type Particle = (&'static [&'static str], usize, usize);

/// A complex type of the schema.
struct Type {
    /// Its attributes, in groups that several types share.
    attributes: &'static [&'static [Attribute]],
    children: &'static [Particle],
    /// Text may stand between the children (`mixed`, or a simple `xs:string` type).
    text: bool,
}

const MANY: usize = usize::MAX;

/// The counts and times of `<testsuites>` and `<testsuite>`.
const TOTALS: [Attribute; 7] = [
    ("tests", Value::Count, true),
    ("failures", Value::Count, true),
    ("errors", Value::Count, true),
    ("skipped", Value::Count, false),
    ("disabled", Value::Count, false),
    ("time", Value::Seconds, false),
    ("timestamp", Value::DateTime, false),
];

const TESTSUITES: Type = Type {
    attributes: &[&[("name", Value::Text, false)], &TOTALS],
    children: &[(&["testsuite"], 0, MANY)],
    text: false,
};

const TESTSUITE: Type = Type {
    attributes: &[
        &[("name", Value::Text, true)],
        &TOTALS,
        &[
            ("hostname", Value::Text, false),
            ("id", Value::Text, false),
            ("package", Value::Text, false),
        ],
    ],
    children: &[
        (&["properties"], 0, 1),
        (&["testcase"], 0, MANY),
        (&["system-out"], 0, 1),
        (&["system-err"], 0, 1),
    ],
    text: false,
};

const TESTCASE: Type = Type {
    attributes: &[&[
        ("name", Value::Text, true),
        ("classname", Value::Text, false),
        ("assertions", Value::Count, false),
        ("time", Value::Seconds, false),
        ("timestamp", Value::DateTime, false),
    ]],
    children: &[
        (&["properties"], 0, 1),
        (&["failure", "error", "skipped"], 0, 1),
        (&["system-out"], 0, 1),
        (&["system-err"], 0, 1),
    ],
    text: false,
};

const OUTCOME: Type = Type {
    attributes: &[&[
        ("message", Value::Text, false),
        ("type", Value::Text, false),
    ]],
    children: &[],
    text: true,
};

const PROPERTIES: Type = Type {
    attributes: &[],
    children: &[(&["property"], 0, MANY)],
    text: false,
};

const PROPERTY: Type = Type {
    attributes: &[&[("name", Value::Text, true), ("value", Value::Text, true)]],
    children: &[],
    text: false,
};

const OUTPUT: Type = Type {
    attributes: &[],
    children: &[],
    text: true,
};

fn type_of(element: &str) -> Option<&'static Type> {
    Some(match element {
        "testsuites" => &TESTSUITES,
        "testsuite" => &TESTSUITE,
        "testcase" => &TESTCASE,
        "failure" | "error" | "skipped" => &OUTCOME,
        "properties" => &PROPERTIES,
        "property" => &PROPERTY,
        "system-out" | "system-err" => &OUTPUT,
        _ => return None,
    })
}

/// Checks `xml` against the schema; the error names the first element that breaks it and how.
pub(crate) fn validate(xml: &str) -> Result<(), String> {
    let root = parse(xml)?;
    if root.name != "testsuites" {
        return Err(format!("the root is <{}>, not <testsuites>", root.name));
    }
    check(&root, "/testsuites")
}

fn parse(xml: &str) -> Result<Element, String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let config = reader.config_mut();
    config.check_end_names = true;
    config.check_comments = true;
    let mut open: Vec<Element> = Vec::new();
    let mut root = None;
    loop {
        let at = reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| format!("not well-formed XML at byte {at}: {e}"))?;
        match event {
            Event::Start(tag) => open.push(element(&tag)?),
            Event::Empty(tag) => close(element(&tag)?, &mut open, &mut root)?,
            Event::End(_) => {
                let done = open.pop().ok_or("an end tag closes nothing")?;
                close(done, &mut open, &mut root)?;
            }
            Event::Text(text) => {
                let text = text.decode().map_err(|e| e.to_string())?;
                push_text(&mut open, &text)?;
            }
            Event::GeneralRef(reference) => {
                let text = match reference.resolve_char_ref().map_err(|e| e.to_string())? {
                    Some(c) => c.to_string(),
                    None => {
                        let name = reference.decode().map_err(|e| e.to_string())?;
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or_else(|| format!("unknown entity &{name};"))?
                            .to_string()
                    }
                };
                push_text(&mut open, &text)?;
            }
            Event::CData(data) => {
                let text = String::from_utf8(data.to_vec()).map_err(|e| e.to_string())?;
                push_text(&mut open, &text)?;
            }
            Event::Eof => break,
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if let Some(unclosed) = open.last() {
        return Err(format!("<{}> is never closed", unclosed.name));
    }
    root.ok_or_else(|| "no root element".to_string())
}

fn element(tag: &BytesStart<'_>) -> Result<Element, String> {
    let name = String::from_utf8(tag.name().as_ref().to_vec()).map_err(|e| e.to_string())?;
    let mut attributes = Vec::new();
    for attribute in tag.attributes() {
        let attribute = attribute.map_err(|e| format!("<{name}>: {e}"))?;
        let key = String::from_utf8(attribute.key.as_ref().to_vec()).map_err(|e| e.to_string())?;
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| format!("<{name} {key}>: {e}"))?;
        attributes.push((key, value.into_owned()));
    }
    Ok(Element {
        name,
        attributes,
        children: Vec::new(),
        text: String::new(),
    })
}

fn close(done: Element, open: &mut [Element], root: &mut Option<Element>) -> Result<(), String> {
    match open.last_mut() {
        Some(parent) => parent.children.push(done),
        None if root.is_none() => *root = Some(done),
        None => return Err(format!("a second root element <{}>", done.name)),
    }
    Ok(())
}

fn push_text(open: &mut [Element], text: &str) -> Result<(), String> {
    match open.last_mut() {
        Some(element) => element.text.push_str(text),
        None if text.trim().is_empty() => {}
        None => return Err(format!("text outside the root: {text:?}")),
    }
    Ok(())
}

fn check(element: &Element, path: &str) -> Result<(), String> {
    let kind = type_of(&element.name).ok_or_else(|| format!("{path}: not a JUnit element"))?;
    for (name, value) in &element.attributes {
        let (_, value_type, _) = kind
            .attributes
            .iter()
            .copied()
            .flatten()
            .find(|(known, _, _)| *known == name.as_str())
            .ok_or_else(|| format!("{path}: attribute {name} is not allowed"))?;
        if !valid(*value_type, value) {
            return Err(format!("{path}: {name}={value:?} is not of its type"));
        }
    }
    for (name, _, required) in kind.attributes.iter().copied().flatten() {
        if *required && !element.attributes.iter().any(|(n, _)| n.as_str() == *name) {
            return Err(format!("{path}: attribute {name} is required"));
        }
    }
    if !kind.text && !element.text.trim().is_empty() {
        return Err(format!("{path}: holds text {:?}", element.text.trim()));
    }
    let mut children = element.children.iter().peekable();
    for (names, min, max) in kind.children {
        let mut seen = 0;
        while seen < *max
            && children
                .peek()
                .is_some_and(|c| names.contains(&c.name.as_str()))
        {
            children.next();
            seen += 1;
        }
        if seen < *min {
            return Err(format!("{path}: needs <{}>", names.join("> or <")));
        }
    }
    if let Some(extra) = children.next() {
        return Err(format!("{path}: <{}> is not allowed here", extra.name));
    }
    for (i, child) in element.children.iter().enumerate() {
        check(child, &format!("{path}/{}[{i}]", child.name))?;
    }
    Ok(())
}

/// Whether `value` is of the schema type `kind` (after XML Schema's whitespace collapse).
fn valid(kind: Value, value: &str) -> bool {
    let value = value.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match kind {
        Value::Text => true,
        Value::Count => digits(value.strip_prefix('+').unwrap_or(value)),
        Value::Seconds => {
            let (negative, unsigned) = match value.as_bytes().first() {
                Some(b'-') => (true, &value[1..]),
                Some(b'+') => (false, &value[1..]),
                _ => (false, value),
            };
            let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
            let only_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
            let decimal =
                (digits(whole) || digits(fraction)) && only_digits(whole) && only_digits(fraction);
            // At least 0: a minus sign is allowed on zero only.
            decimal && !(negative && unsigned.bytes().any(|b| matches!(b, b'1'..=b'9')))
        }
        Value::DateTime => date_time(value),
    }
}

/// `xs:dateTime`: `YYYY-MM-DDThh:mm:ss`, optional fraction, optional `Z` or `±hh:mm`.
fn date_time(value: &str) -> bool {
    let b = value.as_bytes();
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let digits = |range: std::ops::Range<usize>| {
        b.get(range.clone())
            .is_some_and(|d| d.len() == range.len() && d.iter().all(u8::is_ascii_digit))
    };
    let fields = digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && at(10, b'T')
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19);
    if !fields {
        return false;
    }
    let mut rest = &value[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest.as_bytes() {
        [] | [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()),
        _ => false,
    }
}
