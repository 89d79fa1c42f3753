//! Attribute blocks (spec/external.md §5.5), built from structured input:
//! a chain of derived levels, each with a name and attributes (valid or
//! not), then optionally a few byte edits. Without edits the reader's
//! verdict is predicted from the spec's rules, and an accepted stream must
//! give back exactly the attributes written. With keyvals "a" and "b"
//! registered, a valid stream is rebuilt into a type whose streams, in
//! every representation, carry the values of "a" and "b" and no others.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mpix_marshal::testing::attributes::MAX_ATTR_VALUE;
use mpix_marshal::testing::codes::Predefined;
use mpix_marshal::testing::compressed;
use mpix_marshal::testing::external::{self, Encoding, HEADER_LEN};
use mpix_marshal::testing::sink::Sink;
use mpix_marshal::testing::tree::{Attribute, Kind, Node, MAX_ATTR_NAME_LEN, MAX_NAME_LEN};
use mpix_marshal::{unmarshal, Representation};
use mpix_marshal_fuzz::{
    as_rebuilt, assert_parse_error, assert_read_error, check_decoded, check_rebuilt,
    register_keyvals, registered, write_external,
};

/// Registered names are hard to guess byte by byte: offer them directly.
#[derive(Arbitrary, Debug)]
enum AttrName {
    A,
    B,
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Attr {
    name: AttrName,
    value: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
enum Shape {
    Dup,
    /// Not negative: the writer refuses trees without a signature.
    Contiguous(u16),
    Resized(i64, i64),
    /// A struct of two copies of the inner type: attributes on siblings.
    Pair,
}

#[derive(Arbitrary, Debug)]
struct Level {
    shape: Shape,
    name: Option<Vec<u8>>,
    attrs: Vec<Attr>,
    /// Sort and dedup the names, so that valid blocks are common.
    sort: bool,
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Outermost first.
    levels: Vec<Level>,
    double: bool,
    /// (offset modulo the stream length, new byte)
    edits: Vec<(u16, u8)>,
    compressed: bool,
}

const MAX_LEVELS: usize = 6;

fn build(input: &Input) -> Node {
    let leaf = if input.double { 0x214 } else { 0x209 }; // MPI_DOUBLE, MPI_INT
    let mut node = Node::named(Predefined(leaf));
    for level in input.levels.iter().take(MAX_LEVELS).rev() {
        let old = Box::new(node);
        let kind = match level.shape {
            Shape::Dup => Kind::Dup(old),
            Shape::Contiguous(count) => Kind::Contiguous {
                count: count.into(),
                old,
            },
            Shape::Resized(lb, extent) => Kind::Resized { lb, extent, old },
            Shape::Pair => Kind::Struct {
                blocklengths: vec![1, 1],
                displacements: vec![0, 64],
                types: vec![(*old).clone(), *old],
                legacy: false,
            },
        };
        let mut attrs: Vec<Attribute> = level
            .attrs
            .iter()
            .take(8)
            .map(|a| Attribute {
                name: match &a.name {
                    AttrName::A => b"a".to_vec(),
                    AttrName::B => b"b".to_vec(),
                    AttrName::Raw(r) => r.clone(),
                },
                value: a.value.clone(),
            })
            .collect();
        if level.sort {
            attrs.sort_by(|x, y| x.name.cmp(&y.name));
            attrs.dedup_by(|x, y| x.name == y.name);
        }
        node = Node {
            name: level.name.clone(),
            large: false,
            kind,
            attrs,
            bounds: None,
            correction: false,
        };
    }
    node
}

/// What spec/external.md §5.3 and §5.5 allow, level by level.
fn parses(n: &Node) -> bool {
    let name_ok = n
        .name
        .as_ref()
        .is_none_or(|s| (1..=MAX_NAME_LEN).contains(&s.len()) && !s.contains(&0));
    let attrs_ok = n.attrs.iter().all(|a| {
        (1..=MAX_ATTR_NAME_LEN).contains(&a.name.len())
            && !a.name.contains(&0)
            && a.value.len() <= MAX_ATTR_VALUE
    }) && n.attrs.windows(2).all(|w| w[0].name < w[1].name);
    name_ok && attrs_ok && n.children().iter().all(parses)
}

fuzz_target!(|input: Input| {
    register_keyvals();
    let built = build(&input);
    let mut bytes = write_external(&built).expect("the writer takes these shapes");
    let edits = &input.edits[..input.edits.len().min(4)];
    for &(at, v) in edits {
        let i = at as usize % bytes.len();
        bytes[i] = v;
    }
    // The checksum made to match the edits, so that they reach the parser.
    external::reseal(&mut bytes);
    // Edits rarely keep the header's signature hash: the body (without
    // the checksum) is parsed on its own too, and drives the rest.
    let whole = external::read(&bytes);
    let body = &bytes[..bytes.len() - external::CHECKSUM_LEN];
    let parsed = external::read_nodes(body, HEADER_LEN, Encoding::Xdr);
    if edits.is_empty() {
        assert_eq!(
            parsed.is_ok(),
            parses(&built),
            "the reader's verdict is not the spec's: {parsed:?}\ntree: {built:?}"
        );
        assert!(whole == parsed, "the whole stream reads unlike its body");
        if let Ok(t) = &parsed {
            assert!(*t == built, "read back another tree than was written");
        }
    }
    match &whole {
        Ok(t) => assert!(
            Ok(t) == parsed.as_ref(),
            "the whole stream reads unlike its body"
        ),
        Err(e) => assert_read_error(e),
    }
    let tree = match parsed {
        Ok(t) => t,
        Err(e) => return assert_parse_error(&e),
    };
    let (ext, valid) = check_decoded(&tree);
    if whole.is_ok() {
        assert!(
            ext.as_ref() == Some(&bytes),
            "a stream that decodes is not canonical"
        );
    }
    if edits.is_empty() {
        assert!(valid, "validation refused a tree of valid parts");
    }
    let Some(ext) = ext.filter(|_| valid) else {
        return;
    };
    let (rep, stream) = if input.compressed {
        let mut packed = Sink::default();
        compressed::compress(&ext, &mut packed).expect("compress");
        (Representation::Compressed, packed.bytes().to_vec())
    } else {
        (Representation::External, ext)
    };
    check_rebuilt(
        unmarshal(rep, &stream),
        &tree,
        as_rebuilt(&tree, &registered),
    );
});
