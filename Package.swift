// swift-tools-version: 6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
  name: "Strata",
  // The Synchronization module (Atomic, Mutex) ships with these releases on Apple platforms.
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "Strata", targets: ["Strata"]),
    .library(name: "StrataModules", targets: ["StrataModules"]),
    .library(name: "StrataTesting", targets: ["StrataTesting"]),
    .executable(name: "strata-bench", targets: ["StrataBenchmarks"]),
  ],
  targets: [
    .target(
      name: "Strata", dependencies: ["CStrataThreadState"], path: "Sources/Core",
      swiftSettings: strictSettings),
    // Per-thread state in a C `_Thread_local`, which Swift cannot declare (see ThreadContext.swift).
    .target(name: "CStrataThreadState", path: "Sources/CThreadState"),
    .target(
      name: "StrataModules", dependencies: ["Strata"], path: "Sources/Modules",
      swiftSettings: strictSettings),
    .target(
      name: "StrataTesting", dependencies: ["Strata"], path: "Sources/Testing",
      swiftSettings: strictSettings),
    .executableTarget(
      name: "StrataBenchmarks", dependencies: ["Strata", "StrataModules"], path: "Benchmarks",
      exclude: ["callgrind-atomics.py", "generate-startup-graph.py", "readme-table.py"],
      swiftSettings: strictSettings),
    .testTarget(
      name: "StrataTests", dependencies: ["Strata"], path: "Tests/StrataTests",
      swiftSettings: strictSettings),
    .testTarget(
      name: "StrataModulesTests", dependencies: ["StrataModules"],
      path: "Tests/StrataModulesTests", swiftSettings: strictSettings),
    .testTarget(
      name: "StrataTestingTests", dependencies: ["StrataTesting"],
      path: "Tests/StrataTestingTests", swiftSettings: strictSettings),
  ],
  swiftLanguageModes: [.v6]
)
