//! The communication and synchronisation operations the C layers report: the MPI operations of
//! the PMPI layer (rt/shim/pmpi.c) and the OpenMP waits of the OMPT tool (rt/shim/ompt.c). A
//! layer passes an operation's index in `OPERATIONS` to the runtime, which names it from the same
//! list; the layers' C `enum operation` is generated from it (`c_header`: written beside pmpi.c
//! when the wrappers compile it, and by the runtime's build script for ompt.c), so they cannot
//! drift apart.

/// Every operation, in the order of its number.
pub const OPERATIONS: &[&str] = &[
    "MPI_Send",
    "MPI_Recv",
    "MPI_Isend",
    "MPI_Irecv",
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Sendrecv",
    "MPI_Barrier",
    "MPI_Bcast",
    "MPI_Reduce",
    "MPI_Allreduce",
    "MPI_Alltoall",
    "MPI_Alltoallv",
    "MPI_Gather",
    "MPI_Allgather",
    "MPI_Scatter",
    "MPI_Ssend",
    "MPI_Waitany",
    "MPI_Init",
    "MPI_Finalize",
    "OMP_Barrier_implicit",
    "OMP_Barrier_explicit",
    "OMP_Taskwait",
    "OMP_Taskgroup",
    "OMP_Reduction",
    "OMP_Lock",
    "OMP_Critical",
    "OMP_Ordered",
    "OMP_Idle",
];

/// The name of the header pmpi.c includes.
pub const C_HEADER_NAME: &str = "instrument_operations.h";

/// The C enumerator of an operation: `MPI_Allreduce` is `ALLREDUCE`, `OMP_Lock` is `OMP_LOCK`.
pub fn enumerator(operation: &str) -> String {
    operation.trim_start_matches("MPI_").to_ascii_uppercase()
}

/// The header that gives pmpi.c its `enum operation`.
pub fn c_header() -> String {
    let names: Vec<String> = OPERATIONS.iter().map(|o| enumerator(o)).collect();
    format!(
        "/* Generated from instrument_contract::mpi::OPERATIONS: the runtime names operations by \
         these numbers. */\nenum operation {{ {} }};\n",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_numbers_operations_in_list_order() {
        assert!(c_header().contains("enum operation { SEND, RECV, ISEND,"));
        assert!(c_header().contains("WAITANY, INIT, FINALIZE, OMP_BARRIER_IMPLICIT,"));
        assert!(c_header().contains("OMP_ORDERED, OMP_IDLE };"));
    }

    /// Every enumerator the layer uses is generated; a new operation in pmpi.c needs one here.
    #[test]
    fn every_operation_pmpi_c_reports_is_in_the_list() {
        let source =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../rt/shim/pmpi.c")).unwrap();
        let generated: Vec<String> = OPERATIONS.iter().map(|o| enumerator(o)).collect();
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
        for call in ["point_to_point(", "waited(", "collective(", "__instrument_mpi_record("] {
            for (i, _) in source.match_indices(call) {
                let called = !source[..i].ends_with(is_name);
                let argument: String = source[i + call.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                if called && !argument.is_empty() {
                    assert!(
                        generated.contains(&argument),
                        "pmpi.c reports {argument}, which OPERATIONS lacks"
                    );
                }
            }
        }
    }
}
