/// The place in source code where something was registered or requested.
///
/// Strata records a `SourceLocation` for every registration, so that an error or a graph dump can
/// point at the line to change:
///
/// ```swift
/// registry.register(Database.self) { _ in try Postgres() }   // recorded as "App/Setup.swift:12"
/// ```
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
  /// The file, as `#fileID` spells it (`Module/File.swift`).
  public let fileID: String
  /// The line within the file.
  public let line: Int

  /// Creates a location from a file identifier and a line.
  ///
  /// - Parameters:
  ///   - fileID: The file, as `#fileID` spells it.
  ///   - line: The line within the file.
  public init(fileID: String, line: Int) {
    self.fileID = fileID
    self.line = line
  }

  @usableFromInline
  init(_ fileID: StaticString, _ line: UInt) {
    self.init(fileID: String(describing: fileID), line: Int(line))
  }

  /// `Module/File.swift:42`.
  public var description: String { "\(fileID):\(line)" }
}
