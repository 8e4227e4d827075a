import Testing

/// The suites of the low-level types (`Sources/Core/LowLevel`, where all of Strata's unsafe code
/// lives), grouped so that `swift test --filter LowLevel` runs exactly them.
@Suite enum LowLevel {}
