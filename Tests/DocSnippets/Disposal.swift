// What the disposers of the example's `Transaction` and `FileLock` call.

extension Transaction {
  func rollbackIfOpen() async throws {}
}

extension FileLock {
  func release() throws {}
}
