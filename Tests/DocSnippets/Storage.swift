// Per-tenant file storage.

protocol Storage: Sendable {
  func read(_ path: String) throws -> [UInt8]
}

struct S3Storage: Storage {
  let bucket: String
  func read(_ path: String) throws -> [UInt8] { [] }
}

struct TenantSettings: Sendable {
  let id: String
  let bucket: String
}
