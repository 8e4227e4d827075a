// Types that predate Swift concurrency, shared under `.unchecked` lifetimes.

import Foundation

final class ImageCache {
  private let lock = NSLock()
  private var images: [String: [UInt8]] = [:]

  func image(named name: String) -> [UInt8]? {
    lock.lock()
    defer { lock.unlock() }
    return images[name]
  }
}

final class Session {
  let settings: AppSettings
  init(settings: AppSettings) { self.settings = settings }
}

final class AppSettings {
  var locale = "en"
}

func makeISOFormatter() -> DateFormatter {
  let formatter = DateFormatter()
  formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssZ"
  return formatter
}
