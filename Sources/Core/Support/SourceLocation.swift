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
  public var fileID: String {
    switch file {
    case .literal(let literal): literal.description
    case .text(let text): text
    }
  }
  /// The line within the file.
  public let line: Int

  /// The file as given: a `#fileID` literal is kept as it is and made a `String` only when read,
  /// since registering is common and reading the location rare (a `String` of more than 15 bytes
  /// costs an allocation per registration).
  private let file: File

  private enum File: Sendable {
    case literal(StaticString)
    case text(String)
  }

  /// Creates a location from a file identifier and a line.
  ///
  /// - Parameters:
  ///   - fileID: The file, as `#fileID` spells it.
  ///   - line: The line within the file.
  public init(fileID: String, line: Int) {
    self.file = .text(fileID)
    self.line = line
  }

  @usableFromInline
  init(_ fileID: StaticString, _ line: UInt) {
    self.file = .literal(fileID)
    self.line = Int(line)
  }

  /// `Module/File.swift:42`.
  public var description: String { "\(fileID):\(line)" }

  public static func == (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
    lhs.line == rhs.line && lhs.fileID == rhs.fileID
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(fileID)
    hasher.combine(line)
  }
}
