//! Generates `OUT_DIR/calc_program.rs` from `schemas/calc-program.schema.json`.

fn main() {
    if let Err(error) = pilotage_codegen::Builder::new()
        .schema("schemas/calc-program.schema.json")
        .compile()
    {
        // A readable build failure naming the file and the JSON Pointer.
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
