//! The value of one basic element, decoded from its bytes in a data
//! representation: `native` (this machine's sizes and byte order) or
//! `external32` (MPI-IO's portable representation: big-endian, the sizes
//! of the MPI standard's table of external32 sizes, IEEE floats).

use std::fmt::Write;

/// A data representation, as MPI_File_set_view names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datarep {
    Native,
    External32,
}

/// How the bytes of a basic type read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Signed,
    Unsigned,
    Float,
    /// Two floats: real part, imaginary part.
    Complex,
    /// C and C++ bool: false or true.
    Bool,
    /// A C character: printed as a character when printable ASCII.
    Char,
    /// No defined printing (MPI_BYTE, MPI_PACKED, Fortran LOGICAL, ...): hex.
    Bytes,
}

/// The basic types: (MPI name, class, external32 size in bytes; 0 where
/// the standard defines none).
const TABLE: &[(&str, Class, usize)] = &[
    ("MPI_AINT", Class::Signed, 8),
    ("MPI_COUNT", Class::Signed, 8),
    ("MPI_OFFSET", Class::Signed, 8),
    ("MPI_PACKED", Class::Bytes, 1),
    ("MPI_BYTE", Class::Bytes, 1),
    ("MPI_CHAR", Class::Char, 1),
    ("MPI_SIGNED_CHAR", Class::Signed, 1),
    ("MPI_UNSIGNED_CHAR", Class::Unsigned, 1),
    ("MPI_WCHAR", Class::Unsigned, 2),
    ("MPI_SHORT", Class::Signed, 2),
    ("MPI_UNSIGNED_SHORT", Class::Unsigned, 2),
    ("MPI_INT", Class::Signed, 4),
    ("MPI_UNSIGNED", Class::Unsigned, 4),
    ("MPI_LONG", Class::Signed, 4),
    ("MPI_UNSIGNED_LONG", Class::Unsigned, 4),
    ("MPI_LONG_LONG", Class::Signed, 8),
    ("MPI_UNSIGNED_LONG_LONG", Class::Unsigned, 8),
    ("MPI_FLOAT", Class::Float, 4),
    ("MPI_DOUBLE", Class::Float, 8),
    ("MPI_LONG_DOUBLE", Class::Float, 16),
    ("MPIX_C_FLOAT16", Class::Float, 2),
    ("MPI_C_BOOL", Class::Bool, 1),
    ("MPI_CXX_BOOL", Class::Bool, 1),
    ("MPI_INT8_T", Class::Signed, 1),
    ("MPI_INT16_T", Class::Signed, 2),
    ("MPI_INT32_T", Class::Signed, 4),
    ("MPI_INT64_T", Class::Signed, 8),
    ("MPI_UINT8_T", Class::Unsigned, 1),
    ("MPI_UINT16_T", Class::Unsigned, 2),
    ("MPI_UINT32_T", Class::Unsigned, 4),
    ("MPI_UINT64_T", Class::Unsigned, 8),
    ("MPI_C_FLOAT_COMPLEX", Class::Complex, 8),
    ("MPI_C_DOUBLE_COMPLEX", Class::Complex, 16),
    ("MPI_C_LONG_DOUBLE_COMPLEX", Class::Complex, 32),
    ("MPI_CXX_FLOAT_COMPLEX", Class::Complex, 8),
    ("MPI_CXX_DOUBLE_COMPLEX", Class::Complex, 16),
    ("MPI_CXX_LONG_DOUBLE_COMPLEX", Class::Complex, 32),
    ("MPI_CHARACTER", Class::Char, 1),
    ("MPI_LOGICAL", Class::Bytes, 4),
    ("MPI_INTEGER", Class::Signed, 4),
    ("MPI_REAL", Class::Float, 4),
    ("MPI_DOUBLE_PRECISION", Class::Float, 8),
    ("MPI_COMPLEX", Class::Complex, 8),
    ("MPI_DOUBLE_COMPLEX", Class::Complex, 16),
    ("MPI_LOGICAL1", Class::Bytes, 1),
    ("MPI_LOGICAL2", Class::Bytes, 2),
    ("MPI_LOGICAL4", Class::Bytes, 4),
    ("MPI_LOGICAL8", Class::Bytes, 8),
    ("MPI_LOGICAL16", Class::Bytes, 16),
    ("MPI_INTEGER1", Class::Signed, 1),
    ("MPI_INTEGER2", Class::Signed, 2),
    ("MPI_INTEGER4", Class::Signed, 4),
    ("MPI_INTEGER8", Class::Signed, 8),
    ("MPI_INTEGER16", Class::Signed, 16),
    ("MPI_REAL2", Class::Float, 2),
    ("MPI_REAL4", Class::Float, 4),
    ("MPI_REAL8", Class::Float, 8),
    ("MPI_REAL16", Class::Float, 16),
    ("MPI_COMPLEX4", Class::Complex, 4),
    ("MPI_COMPLEX8", Class::Complex, 8),
    ("MPI_COMPLEX16", Class::Complex, 16),
    ("MPI_COMPLEX32", Class::Complex, 32),
];

/// The class and external32 size of a basic type by its MPI name; types
/// the table lacks (Fortran kinds made by MPI_Type_create_f90_*) are bytes
/// with no external32 size.
pub fn class(name: &str) -> (Class, usize) {
    TABLE
        .iter()
        .find(|(n, _, _)| *n == name)
        .map_or((Class::Bytes, 0), |(_, c, s)| (*c, *s))
}

/// A decoded value, for text and JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    Int(i128),
    Uint(u128),
    Float(f64),
    Complex(f64, f64),
    Bool(bool),
    Char(u8),
    Hex(Vec<u8>),
}

impl std::fmt::Display for Decoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decoded::Int(v) => write!(f, "{v}"),
            Decoded::Uint(v) => write!(f, "{v}"),
            Decoded::Float(v) => write!(f, "{v:?}"),
            Decoded::Complex(re, im) => write!(f, "({re:?}, {im:?})"),
            Decoded::Bool(b) => write!(f, "{b}"),
            Decoded::Char(c) if c.is_ascii_graphic() || *c == b' ' => {
                write!(f, "{:?} ({c})", *c as char)
            }
            Decoded::Char(c) => write!(f, "{c}"),
            Decoded::Hex(b) => f.write_str(&hex(b)),
        }
    }
}

/// Bytes as "0x" and two hex digits each.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::from("0x");
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The bytes in big-endian order (the order the decoders below read).
fn big_endian(bytes: &[u8], rep: Datarep) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if rep == Datarep::Native && cfg!(target_endian = "little") {
        v.reverse();
    }
    v
}

/// Decodes `bytes`, one element of class `class`, in representation `rep`.
pub fn decode(class: Class, bytes: &[u8], rep: Datarep) -> Decoded {
    let be = || big_endian(bytes, rep);
    match class {
        Class::Signed if bytes.len() <= 16 && !bytes.is_empty() => {
            let b = be();
            let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
            let mut full = [fill; 16];
            full[16 - b.len()..].copy_from_slice(&b);
            Decoded::Int(i128::from_be_bytes(full))
        }
        Class::Unsigned if bytes.len() <= 16 => {
            let mut full = [0; 16];
            full[16 - bytes.len()..].copy_from_slice(&be());
            Decoded::Uint(u128::from_be_bytes(full))
        }
        Class::Float => match float(bytes, rep) {
            Some(v) => Decoded::Float(v),
            None => Decoded::Hex(bytes.to_vec()),
        },
        Class::Complex => {
            let (re, im) = bytes.split_at(bytes.len() / 2);
            match (float(re, rep), float(im, rep)) {
                (Some(a), Some(b)) => Decoded::Complex(a, b),
                _ => Decoded::Hex(bytes.to_vec()),
            }
        }
        Class::Bool if bytes.len() == 1 => Decoded::Bool(bytes[0] != 0),
        Class::Char if bytes.len() == 1 => Decoded::Char(bytes[0]),
        _ => Decoded::Hex(bytes.to_vec()),
    }
}

/// An IEEE float of 2, 4, 8 or 16 bytes, or a native x87 long double
/// (16 bytes on x86), as the nearest f64; None for other sizes.
fn float(bytes: &[u8], rep: Datarep) -> Option<f64> {
    let b = big_endian(bytes, rep);
    match b.len() {
        2 => Some(half(u16::from_be_bytes([b[0], b[1]]))),
        4 => Some(f64::from(f32::from_be_bytes(b.try_into().ok()?))),
        8 => Some(f64::from_be_bytes(b.try_into().ok()?)),
        16 if rep == Datarep::Native && cfg!(any(target_arch = "x86", target_arch = "x86_64")) => {
            // The x87 80-bit format in the low ten bytes (big-endian here:
            // the last ten): sign and exponent, then a 64-bit significand
            // with its integer bit explicit.
            let se = u16::from_be_bytes([b[6], b[7]]);
            let m = u64::from_be_bytes(b[8..16].try_into().ok()?);
            let e = i32::from(se & 0x7fff);
            let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
            Some(match e {
                0x7fff if m << 1 == 0 => sign * f64::INFINITY,
                0x7fff => f64::NAN,
                _ => sign * scale(m as f64, e - 16383 - 63),
            })
        }
        16 => {
            // IEEE binary128: sign, 15-bit exponent, 112-bit fraction.
            let v = u128::from_be_bytes(b.try_into().ok()?);
            let e = ((v >> 112) & 0x7fff) as i32;
            let frac = v & ((1u128 << 112) - 1);
            let sign = if v >> 127 != 0 { -1.0 } else { 1.0 };
            Some(match e {
                0x7fff if frac == 0 => sign * f64::INFINITY,
                0x7fff => f64::NAN,
                0 => sign * scale(frac as f64, -16382 - 112),
                _ => sign * scale((frac | 1u128 << 112) as f64, e - 16383 - 112),
            })
        }
        _ => None,
    }
}

/// `x` × 2^`e`, without overflowing the power on the way.
fn scale(mut x: f64, mut e: i32) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e)
}

/// IEEE binary16.
fn half(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f64::from(h & 0x3ff);
    sign * match e {
        0 => scale(m, -24),
        0x1f if m == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        _ => scale(m + 1024.0, e - 25),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_decodes_in_both_representations() {
        let n = Datarep::Native;
        let x = Datarep::External32;
        assert_eq!(
            decode(Class::Signed, &(-5i32).to_ne_bytes(), n),
            Decoded::Int(-5)
        );
        assert_eq!(
            decode(Class::Signed, &(-5i32).to_be_bytes(), x),
            Decoded::Int(-5)
        );
        assert_eq!(
            decode(Class::Unsigned, &[0xff, 0xfe], x),
            Decoded::Uint(0xfffe)
        );
        assert_eq!(
            decode(Class::Float, &34.0f64.to_be_bytes(), x).to_string(),
            "34.0"
        );
        assert_eq!(
            decode(Class::Float, &1.5f32.to_ne_bytes(), n),
            Decoded::Float(1.5)
        );
        // binary128 1.5 and -2 (big-endian), and binary16 -2.
        let mut q = [0u8; 16];
        q[0] = 0x3f;
        q[1] = 0xff;
        q[2] = 0x80;
        assert_eq!(decode(Class::Float, &q, x), Decoded::Float(1.5));
        q[0] = 0xc0;
        q[1] = 0x00;
        q[2] = 0;
        assert_eq!(decode(Class::Float, &q, x), Decoded::Float(-2.0));
        assert_eq!(decode(Class::Float, &[0xc0, 0x00], x), Decoded::Float(-2.0));
        assert_eq!(
            decode(
                Class::Complex,
                &[1.0f32.to_be_bytes(), (-1.0f32).to_be_bytes()].concat(),
                x
            )
            .to_string(),
            "(1.0, -1.0)"
        );
        assert_eq!(decode(Class::Bytes, &[0xab, 0x01], n).to_string(), "0xab01");
        assert_eq!(decode(Class::Char, b"A", n).to_string(), "'A' (65)");
        assert_eq!(decode(Class::Bool, &[2], n), Decoded::Bool(true));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_native_x87_long_double_decodes() {
        // 1.5 as x87: significand 0xC000..., exponent 16383, little-endian,
        // padded to 16 bytes.
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&0xc000_0000_0000_0000u64.to_le_bytes());
        b[8..10].copy_from_slice(&16383u16.to_le_bytes());
        assert_eq!(
            decode(Class::Float, &b, Datarep::Native),
            Decoded::Float(1.5)
        );
    }
}
