//! Generates `OUT_DIR/calc_program.rs` and `OUT_DIR/calc_library.rs`: two schemas of one set
//! (the library refers to the program by relative path), and a document known by a URI; and
//! `OUT_DIR/awkward.rs`, from a schema with what real schemas do that typify 0.8 cannot type
//! (generated with warnings, `cargo:warning` lines of this build); and `OUT_DIR/numbers.rs`,
//! a `number` in every place a schema puts one.

fn main() {
    if let Err(error) = pilotage_codegen::Builder::new()
        .schema("schemas/calc-program.schema.json")
        .schema("schemas/calc-library.schema.json")
        .schema("schemas/awkward.schema.json")
        .schema("schemas/numbers.schema.json")
        .document("https://example.com/calc/tag.json", "schemas/shared/tag.json")
        .compile()
    {
        // A readable build failure naming the file and the JSON Pointer.
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
