//! `dump --data`: corpus types with known values written through MPI-IO
//! (MPI_File_set_view with the type as filetype, MPI_File_write_all) in
//! the native and external32 representations, read back by the command
//! and compared value by value; short files, --count, --offset and the
//! element paths. MPI-IO comes from the classic bindings (mpi-sys): the
//! MPI-5 ABI build has no file functions.
#![cfg(feature = "classic")]

mod fixtures;

use fixtures::common::*;
use fixtures::*;
use mpix_marshal::testing::mpi::sys as ffi;
use mpix_marshal::testing::mpi::Datatype;
use mpix_marshal::{marshal, Representation};
use mpix_marshal_cli::draw::layout::{Builder, Shape};
use serde_json::{json, Value};
use std::ffi::CString;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};

/// The typemap a shape describes, expanded: (displacement, label, size).
fn expand(s: &Shape, base: i64, out: &mut Vec<(i64, String, i64)>) {
    match s {
        Shape::Elem { label, size, .. } => out.push((base, label.clone(), *size)),
        Shape::Marker { .. } => {}
        Shape::Seq(items) => items.iter().for_each(|(at, x)| expand(x, base + at, out)),
        Shape::Repeat {
            count,
            stride,
            body,
            ..
        } => (0..*count).for_each(|i| expand(body, base + i * stride, out)),
    }
}

/// Element `j`'s known value of type `label`: its native bytes and the
/// value the command's JSON gives; None for types the test does not fill.
fn known(label: &str, j: usize) -> Option<(Vec<u8>, Value)> {
    let j = j as i64;
    Some(match label {
        "MPI_INT" | "MPI_INT32_T" => {
            let v = (j * 7 - 50) as i32;
            (v.to_ne_bytes().to_vec(), json!(v))
        }
        "MPI_UNSIGNED" => {
            let v = (j * 3 + 1) as u32;
            (v.to_ne_bytes().to_vec(), json!(v))
        }
        "MPI_SHORT" => {
            let v = (j % 1000 - 500) as i16;
            (v.to_ne_bytes().to_vec(), json!(v))
        }
        "MPI_LONG_LONG" | "MPI_INT64_T" => {
            let v = j * 1_000_000_007 - 3;
            (v.to_ne_bytes().to_vec(), json!(v))
        }
        "MPI_FLOAT" => {
            let v = j as f32 + 0.25;
            (v.to_ne_bytes().to_vec(), json!(f64::from(v)))
        }
        "MPI_DOUBLE" => {
            let v = j as f64 * 1.5 - 7.25;
            (v.to_ne_bytes().to_vec(), json!(v))
        }
        "MPI_CHAR" | "MPI_UNSIGNED_CHAR" => {
            let v = (j * 13 % 256) as u8;
            (vec![v], json!(v))
        }
        "MPI_BYTE" | "MPI_PACKED" => {
            let v = (j * 13 % 256) as u8;
            (vec![v], json!(format!("0x{v:02x}")))
        }
        _ => return None,
    })
}

fn is_mpich() -> bool {
    let mut buf = vec![0u8; 8192];
    let mut len: c_int = 0;
    // SAFETY: the buffer is larger than MPI_MAX_LIBRARY_VERSION_STRING in both MPIs.
    unsafe { ffi::MPI_Get_library_version(buf.as_mut_ptr().cast(), &mut len) };
    String::from_utf8_lossy(&buf[..len.max(0) as usize]).contains("MPICH")
}

/// Writes `mem` (one element of `memtype`) to `path` through a file view
/// of `filetype` at displacement `disp`, in representation `rep`.
fn write_view(
    path: &Path,
    disp: i64,
    filetype: Datatype,
    rep: &str,
    mem: &[u8],
    memtype: Datatype,
) {
    let name = CString::new(path.to_str().unwrap()).unwrap();
    let rep = CString::new(rep).unwrap();
    let mut fh = unsafe { ffi::RSMPI_FILE_NULL };
    let (mut ft, mut mt) = (filetype, memtype);
    // SAFETY: valid handles, a NUL-terminated name, and a buffer of one
    // memtype's extent (the caller's); the file is closed before return.
    unsafe {
        ok(ffi::MPI_Type_commit(&mut ft), "commit");
        ok(ffi::MPI_Type_commit(&mut mt), "commit");
        ok(
            ffi::MPI_File_open(
                ffi::RSMPI_COMM_SELF,
                name.as_ptr(),
                (ffi::MPI_MODE_CREATE | ffi::MPI_MODE_WRONLY) as c_int,
                ffi::RSMPI_INFO_NULL,
                &mut fh,
            ),
            "MPI_File_open",
        );
        ok(
            ffi::MPI_File_set_view(
                fh,
                disp as _,
                ffi::RSMPI_UINT8_T,
                ft,
                rep.as_ptr(),
                ffi::RSMPI_INFO_NULL,
            ),
            "MPI_File_set_view",
        );
        ok(
            ffi::MPI_File_write_all(fh, mem.as_ptr().cast(), 1, mt, ffi::RSMPI_STATUS_IGNORE),
            "MPI_File_write_all",
        );
        ok(ffi::MPI_File_close(&mut fh), "MPI_File_close");
    }
}

/// Where this test's files go.
fn out_dir() -> PathBuf {
    let d = dir().join("data");
    std::fs::create_dir_all(&d).unwrap();
    d
}

const COPIES: usize = 2;
/// The view's displacement: --offset.
const DISP: i64 = 24;

/// For every corpus type a file view accepts (elements in order, not
/// overlapping, inside [0, extent)) and whose basic types the test fills:
/// two copies of known values written through MPI-IO, in native and in
/// external32 (MPICH 4's MPI_Pack_external_size aborts on a type of
/// several basic types: there external32 is written for types of one
/// basic type only), read back by `dump --data --json` and compared value
/// by value, with each value's type and file offset.
#[test]
fn values_written_through_mpi_io_read_back_in_both_datareps() {
    init();
    let mpich = is_mpich();
    let (mut native, mut external) = (0, 0);
    for case in corpus() {
        let tree = mpix_marshal::type_tree(case.datatype).unwrap();
        let mut b = Builder::default();
        let Ok(shape) = b.shape(&tree) else { continue };
        let Ok(e) = b.extents(&tree) else { continue };
        if mpix_marshal::tree_signature_count(&tree).unwrap() > 5000 || e.extent <= 0 {
            continue;
        }
        let mut map = Vec::new();
        expand(&shape, 0, &mut map);
        let in_order = map.windows(2).all(|w| w[0].0 + w[0].2 <= w[1].0);
        let inside = map.iter().all(|(d, _, s)| *d >= 0 && d + s <= e.extent);
        if map.is_empty() || !in_order || !inside || e.lb < 0 || e.extent > 1 << 20 {
            continue;
        }
        // The values: element j of the file (copy j / n) gets known(j).
        let n = map.len();
        let mut expect = Vec::new();
        let mut mem = Vec::new();
        let mut types = Vec::new();
        for j in 0..COPIES * n {
            let (d, label, _) = &map[j % n];
            let Some((bytes, v)) = known(label, j) else {
                break;
            };
            let at = DISP + (j / n) as i64 * e.extent + d;
            expect.push(json!({"type": label, "offset": at, "value": v}));
            mem.push(bytes);
            types.push(named(label));
        }
        if expect.len() != COPIES * n {
            continue;
        }
        // The memory side: the values one after the other in 16-byte slots.
        let slots: Vec<ffi::MPI_Aint> = (0..types.len()).map(|i| 16 * i as ffi::MPI_Aint).collect();
        let mut buf = vec![0u8; 16 * types.len()];
        for (i, m) in mem.iter().enumerate() {
            buf[16 * i..16 * i + m.len()].copy_from_slice(m);
        }
        let one_type = map.iter().all(|(_, l, _)| *l == map[0].1);
        let memtype = structure(&vec![1; types.len()], &slots, &types);
        let file_name: String = case
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let archive = out_dir().join(format!("{file_name}.mxdt"));
        std::fs::write(
            &archive,
            marshal(Representation::External, case.datatype).unwrap(),
        )
        .unwrap();
        for rep in ["native", "external32"] {
            if rep == "external32" && mpich && !one_type {
                continue;
            }
            let memtype = if rep == "external32" && mpich {
                // A contiguous run of the one basic type (MPICH 4 aborts
                // packing a struct to external32), packed in memory.
                let size = map[0].2 as usize;
                let packed: Vec<u8> = mem.iter().flatten().copied().collect();
                assert_eq!(packed.len(), size * types.len());
                buf = packed;
                contiguous(types.len() as i32, types[0])
            } else {
                memtype
            };
            let data = out_dir().join(format!("{file_name}.{rep}"));
            let _ = std::fs::remove_file(&data);
            eprintln!("writing {} in {rep}", case.name);
            write_view(&data, DISP, case.datatype, rep, &buf, memtype);
            let o = run(&[
                "dump",
                archive.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
                "--offset",
                &DISP.to_string(),
                "--datarep",
                rep,
                "--json",
            ]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{} {rep}: {}",
                case.name,
                stderr(&o)
            );
            let got: Value = serde_json::from_slice(&o.stdout).unwrap();
            let got = got.as_array().unwrap();
            assert_eq!(
                got.len(),
                expect.len(),
                "{} {rep}: element count",
                case.name
            );
            for (j, (g, w)) in got.iter().zip(&expect).enumerate() {
                for k in ["type", "offset", "value"] {
                    assert_eq!(
                        g[k], w[k],
                        "{} {rep}: element {j} ({})",
                        case.name, g["path"]
                    );
                }
                assert!(
                    g["path"]
                        .as_str()
                        .unwrap()
                        .starts_with(&format!("[{}]", j / n)),
                    "{}: {}",
                    case.name,
                    g["path"]
                );
            }
            if rep == "native" {
                native += 1;
            } else {
                external += 1;
            }
        }
    }
    eprintln!("compared: {native} types in native, {external} in external32");
    assert!(native >= 15, "only {native} types compared in native");
    assert!(
        external >= 8,
        "only {external} types compared in external32"
    );
}

fn archive_of(name: &str, t: Datatype) -> String {
    let p = out_dir().join(format!("{name}.mxdt"));
    std::fs::write(&p, marshal(Representation::External, t).unwrap()).unwrap();
    p.display().to_string()
}

fn data_file(name: &str, bytes: &[u8]) -> String {
    let p = out_dir().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

#[test]
fn the_text_names_each_element_by_its_path() {
    init();
    // struct { int a; double b[3]; } as {int at 0, 3 doubles at 8}, extent 32.
    let t = structure(&[1, 3], &[0, 8], &[named("MPI_INT"), named("MPI_DOUBLE")]);
    let a = archive_of("path_struct", t);
    let mut bytes = Vec::new();
    for k in 0..2 {
        bytes.extend((k * 10i32).to_ne_bytes());
        bytes.extend([0u8; 4]);
        for i in 0..3 {
            bytes.extend((k as f64 * 10.0 + i as f64 + 0.5).to_ne_bytes());
        }
    }
    let d = data_file("path_struct.bin", &bytes);
    let o = run(&["dump", &a, "--data", &d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "[0] > member 0: MPI_INT 0\n\
         [0] > member 1 > [0]: MPI_DOUBLE 0.5\n\
         [0] > member 1 > [1]: MPI_DOUBLE 1.5\n\
         [0] > member 1 > [2]: MPI_DOUBLE 2.5\n\
         [1] > member 0: MPI_INT 10\n\
         [1] > member 1 > [0]: MPI_DOUBLE 10.5\n\
         [1] > member 1 > [1]: MPI_DOUBLE 11.5\n\
         [1] > member 1 > [2]: MPI_DOUBLE 12.5\n"
    );
    // --count, and --offset: from copy 1.
    let o = run(&["dump", &a, "--data", &d, "--count", "2", "--offset", "32"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "[0] > member 0: MPI_INT 10\n[0] > member 1 > [0]: MPI_DOUBLE 10.5\n"
    );
    // A vector's blocks, a subarray's indices.
    let v = vector(2, 2, 3, named("MPI_SHORT"));
    let a = archive_of("path_vector", v);
    let d = data_file("path_vector.bin", &[1, 0, 2, 0, 0, 0, 3, 0, 4, 0]);
    let o = run(&["dump", &a, "--data", &d]);
    assert_eq!(
        stdout(&o),
        "[0] > block 0 > [0]: MPI_SHORT 1\n[0] > block 0 > [1]: MPI_SHORT 2\n\
         [0] > block 1 > [0]: MPI_SHORT 3\n[0] > block 1 > [1]: MPI_SHORT 4\n"
    );
    let s = subarray(&[4, 5], &[2, 2], &[1, 3], false, named("MPI_BYTE"));
    let a = archive_of("path_subarray", s);
    let d = data_file("path_subarray.bin", &(0..20u8).collect::<Vec<_>>());
    let o = run(&["dump", &a, "--data", &d]);
    assert_eq!(
        stdout(&o),
        "[0] > [1, 3]: MPI_BYTE 0x08\n[0] > [1, 4]: MPI_BYTE 0x09\n\
         [0] > [2, 3]: MPI_BYTE 0x0d\n[0] > [2, 4]: MPI_BYTE 0x0e\n"
    );
}

#[test]
fn a_short_file_prints_what_is_complete_and_names_the_byte() {
    init();
    let t = contiguous(3, named("MPI_INT"));
    let a = archive_of("short_contig", t);
    let bytes: Vec<u8> = [7i32, 8, 9, 10]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let d = data_file("short.bin", &bytes[..14]);
    let o = run(&["dump", &a, "--data", &d]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stdout(&o),
        "[0] > [0]: MPI_INT 7\n[0] > [1]: MPI_INT 8\n[0] > [2]: MPI_INT 9\n"
    );
    assert_eq!(
        stderr(&o),
        format!(
            "mpix-marshal: {d}: the data ends at byte 14, inside the element at bytes 12..16\n"
        )
    );
    // Copy 1 starts at byte 12: its first element is incomplete too.
    let d = data_file("short2.bin", &bytes);
    let o = run(&["dump", &a, "--data", &d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).ends_with("[1] > [0]: MPI_INT 10\n"),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("the data ends at byte 16, inside the element at bytes 16..20"));
    // An empty file, a missing one.
    let d = data_file("empty.bin", &[]);
    let o = run(&["dump", &a, "--data", &d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the data ends at byte 0"),
        "{}",
        stderr(&o)
    );
    let o = run(&["dump", &a, "--data", "no/such.bin"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no/such.bin: No such file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn external32_refuses_types_whose_sizes_differ_here() {
    init();
    let long = named("MPI_LONG");
    let a = archive_of("longs", contiguous(2, long));
    let d = data_file("longs.bin", &[0u8; 16]);
    let o = run(&["dump", &a, "--data", &d, "--datarep", "external32"]);
    if std::mem::size_of::<std::os::raw::c_long>() == 4 {
        assert_eq!(o.status.code(), Some(0));
        return;
    }
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("MPI_LONG is 4 bytes in external32 but 8 bytes here"),
        "{}",
        stderr(&o)
    );
    // Natively it reads.
    let o = run(&["dump", &a, "--data", &d]);
    assert_eq!(stdout(&o), "[0] > [0]: MPI_LONG 0\n[0] > [1]: MPI_LONG 0\n");
}

/// The external32 sizes the command uses are those MPI-IO writes: two
/// elements of each basic type of the C standard, their lowest byte 1 and
/// 2 and the others 0 (for a float, the lowest significand bits), written
/// through a file view in external32, are big-endian: the first byte 2
/// ends the second element. (Not MPI_Pack_external_size: Open MPI 4
/// answers 8 for MPI_LONG there but writes 4 bytes; nor the file's length:
/// MPICH 4 writes the file to the native extent.)
#[test]
fn external32_sizes_are_what_mpi_io_writes() {
    init();
    for name in [
        "MPI_CHAR",
        "MPI_SHORT",
        "MPI_INT",
        "MPI_LONG",
        "MPI_LONG_LONG",
        "MPI_FLOAT",
        "MPI_DOUBLE",
        "MPI_UNSIGNED",
        "MPI_UNSIGNED_LONG",
        "MPI_BYTE",
        "MPI_INT8_T",
        "MPI_INT16_T",
        "MPI_INT64_T",
        "MPI_UINT32_T",
    ] {
        let Some(t) = try_named(name) else { continue };
        let mut native = 0;
        // SAFETY: a predefined handle and a valid out pointer.
        ok(
            unsafe { ffi::MPI_Type_size(t, &mut native) },
            "MPI_Type_size",
        );
        let value = |low: u8| match name {
            "MPI_FLOAT" => f32::from_bits(0x3f80_0000 | u32::from(low))
                .to_ne_bytes()
                .to_vec(),
            "MPI_DOUBLE" => f64::from_bits(0x3ff0_0000_0000_0000 | u64::from(low))
                .to_ne_bytes()
                .to_vec(),
            _ => {
                let v = u64::from(low).to_ne_bytes();
                if cfg!(target_endian = "little") {
                    v[..native as usize].to_vec()
                } else {
                    v[8 - native as usize..].to_vec()
                }
            }
        };
        let two = contiguous(2, t);
        let path = out_dir().join(format!("size_{name}.external32"));
        let _ = std::fs::remove_file(&path);
        write_view(
            &path,
            0,
            two,
            "external32",
            &[value(1), value(2)].concat(),
            two,
        );
        free(two);
        let file = std::fs::read(&path).unwrap();
        let end = file.iter().position(|b| *b == 2).unwrap() + 1;
        let (_, mine) = mpix_marshal_cli::data::values::class(name);
        assert_eq!(2 * mine, end, "{name}: {file:?}");
        assert_eq!(file[mine - 1], 1, "{name}: {file:?}");
    }
}
