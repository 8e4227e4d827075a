import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Counts heap allocations: every call to `malloc`, `calloc`, `realloc`, `posix_memalign`,
/// `aligned_alloc` and `memalign` made by the Swift runtime and the other loaded libraries.
///
/// How: defining `malloc` in the executable (`@_cdecl("malloc")`) does not interpose it, because
/// SwiftPM links executables without `--export-dynamic` (and the compiler warns that the name is
/// reserved). Instead, ``start()`` rewrites the global offset table (GOT) slots through which each
/// loaded library (`libswiftCore.so` above all: `swift_slowAlloc` calls `malloc` there) reaches
/// those functions, pointing them at counting wrappers that forward to glibc; ``stop()`` puts the
/// original pointers back. Counting therefore costs nothing while it is off: timed samples run
/// with the original GOT. glibc's own internal allocations are not counted (libc and the dynamic
/// loader are left alone); nothing measured here allocates through them.
///
/// Only ``start()``/``stop()`` write the GOT, from the main thread, while no measured thread runs.
/// Available on Linux (x86_64, arm64) only; elsewhere ``isAvailable`` is `false`.
enum AllocationCounter {
  /// Allocations counted since the process started, by all threads, while counting was on.
  static var count: Int { allocationCount.load(ordering: .relaxed) }

  /// Whether counting works: the GOT slots were found and the self-test passed.
  static var isAvailable: Bool { patchState.withLock { $0.available } }

  /// Why counting is unavailable, if it is.
  static var problem: String? { patchState.withLock { $0.problem } }

  /// Finds the GOT slots and checks that counting sees exactly the allocations it should.
  /// Call once, before any other thread starts.
  static func install() {
    #if os(Linux) && (arch(x86_64) || arch(arm64))
      // Initialize every global the wrappers touch now, so that they never run an initializer.
      _ = count
      guard realAllocator != nil else {
        return fail("glibc's allocation functions were not found with dlsym")
      }
      let slots = GOTScanner.findSlots()
      guard slots.contains(where: { $0.symbol == "malloc" }) else {
        return fail("no GOT slot for malloc was found in the loaded libraries")
      }
      patchState.withLock {
        $0.slots = slots
        $0.available = true
      }
      if let problem = selfTest() { fail(problem) }
    #else
      fail("allocation counting is implemented for Linux (x86_64, arm64) only")
    #endif
  }

  /// Starts counting (redirects the GOT slots to the counting wrappers).
  static func start() { setPatched(true) }

  /// Stops counting (restores the original GOT slots).
  static func stop() { setPatched(false) }

  private static func setPatched(_ patched: Bool) {
    patchState.withLock { state in
      guard state.available, state.patched != patched else { return }
      for slot in state.slots {
        slot.address.pointee = patched ? slot.replacement : slot.original
      }
      state.patched = patched
    }
  }

  private static func fail(_ problem: String) {
    stop()
    patchState.withLock {
      $0.available = false
      $0.problem = problem
    }
  }

  /// `nil` if 1,000 new class instances count as 1,000 allocations and 1,000 additions as none.
  private static func selfTest() -> String? {
    let objects = counted { for index in 0..<1000 { blackHole(AllocationProbe(index)) } }
    var sum = 0
    let arithmetic = counted {
      for index in 0..<1000 { sum &+= index &* index }
      blackHole(sum)
    }
    guard objects == 1000, arithmetic == 0 else {
      return "self-test failed: 1,000 objects counted as \(objects) allocations (expected 1,000), "
        + "1,000 additions as \(arithmetic) (expected 0)"
    }
    return nil
  }

  private static func counted(_ body: () -> Void) -> Int {
    start()
    let before = count
    body()
    let after = count
    stop()
    return after - before
  }
}

/// A class instance for the self-test.
private final class AllocationProbe {
  let value: Int

  init(_ value: Int) {
    self.value = value
  }
}

private let allocationCount = Atomic<Int>(0)

/// The GOT slots and whether they currently point at the counting wrappers.
private struct PatchState {
  var slots: [GOTSlot] = []
  var available = false
  var patched = false
  var problem: String?
}

private let patchState = Mutex(PatchState())

/// One GOT entry of one loaded library.
///
/// `@unchecked Sendable`: the address is only written under `patchState`'s lock, by the main thread.
private struct GOTSlot: @unchecked Sendable {
  let symbol: String
  let address: UnsafeMutablePointer<UInt>
  let original: UInt
  let replacement: UInt
}

// MARK: - The wrappers

private typealias MallocFunction = @convention(c) (Int) -> UnsafeMutableRawPointer?
private typealias CallocFunction = @convention(c) (Int, Int) -> UnsafeMutableRawPointer?
private typealias ReallocFunction =
  @convention(c) (UnsafeMutableRawPointer?, Int) -> UnsafeMutableRawPointer?
private typealias PosixMemalignFunction =
  @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int, Int) -> Int32
/// `aligned_alloc(alignment, size)` and `memalign(alignment, size)`.
private typealias AlignedAllocFunction = @convention(c) (Int, Int) -> UnsafeMutableRawPointer?

/// glibc's implementations, which the wrappers forward to.
///
/// `@unchecked Sendable`: immutable C function pointers.
private struct RealAllocator: @unchecked Sendable {
  let malloc: MallocFunction
  let calloc: CallocFunction
  let realloc: ReallocFunction
  let posixMemalign: PosixMemalignFunction
  let alignedAlloc: AlignedAllocFunction
  let memalign: AlignedAllocFunction

  static func load() -> RealAllocator? {
    #if os(Linux)
      func symbol<Function>(_ name: String, as type: Function.Type) -> Function? {
        // RTLD_DEFAULT (nil): the executable defines none of these, so this is glibc's.
        guard let address = dlsym(nil, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
      }
      guard let malloc = symbol("malloc", as: MallocFunction.self),
        let calloc = symbol("calloc", as: CallocFunction.self),
        let realloc = symbol("realloc", as: ReallocFunction.self),
        let posixMemalign = symbol("posix_memalign", as: PosixMemalignFunction.self),
        let alignedAlloc = symbol("aligned_alloc", as: AlignedAllocFunction.self),
        let memalign = symbol("memalign", as: AlignedAllocFunction.self)
      else { return nil }
      return RealAllocator(
        malloc: malloc, calloc: calloc, realloc: realloc, posixMemalign: posixMemalign,
        alignedAlloc: alignedAlloc, memalign: memalign)
    #else
      return nil
    #endif
  }
}

/// Loaded (by `install()`) before any slot points at a wrapper, so the wrappers never run its
/// initializer.
private let realAllocator = RealAllocator.load()

private func countingMalloc(_ size: Int) -> UnsafeMutableRawPointer? {
  allocationCount.add(1, ordering: .relaxed)
  return realAllocator.unsafelyUnwrapped.malloc(size)
}

private func countingCalloc(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer? {
  allocationCount.add(1, ordering: .relaxed)
  return realAllocator.unsafelyUnwrapped.calloc(count, size)
}

private func countingRealloc(_ pointer: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
  allocationCount.add(1, ordering: .relaxed)
  return realAllocator.unsafelyUnwrapped.realloc(pointer, size)
}

private func countingPosixMemalign(
  _ result: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ alignment: Int, _ size: Int
) -> Int32 {
  allocationCount.add(1, ordering: .relaxed)
  return realAllocator.unsafelyUnwrapped.posixMemalign(result, alignment, size)
}

private func countingAlignedAlloc(_ alignment: Int, _ size: Int) -> UnsafeMutableRawPointer? {
  allocationCount.add(1, ordering: .relaxed)
  return realAllocator.unsafelyUnwrapped.alignedAlloc(alignment, size)
}

private func countingMemalign(_ alignment: Int, _ size: Int) -> UnsafeMutableRawPointer? {
  allocationCount.add(1, ordering: .relaxed)
  return realAllocator.unsafelyUnwrapped.memalign(alignment, size)
}

// MARK: - Finding the GOT slots

#if os(Linux) && (arch(x86_64) || arch(arm64))
  /// Walks the loaded objects' dynamic relocations for the allocation functions' GOT slots.
  private enum GOTScanner {
    #if arch(x86_64)
      static let slotRelocationTypes: Set<UInt32> = [
        UInt32(R_X86_64_JUMP_SLOT), UInt32(R_X86_64_GLOB_DAT),
      ]
    #else
      static let slotRelocationTypes: Set<UInt32> = [
        UInt32(R_AARCH64_JUMP_SLOT), UInt32(R_AARCH64_GLOB_DAT),
      ]
    #endif

    /// The wrapper for each function, as a raw address.
    static let replacements: [String: UInt] = {
      func address<Function>(_ function: Function) -> UInt { unsafeBitCast(function, to: UInt.self) }
      return [
        "malloc": address(countingMalloc as MallocFunction),
        "calloc": address(countingCalloc as CallocFunction),
        "realloc": address(countingRealloc as ReallocFunction),
        "posix_memalign": address(countingPosixMemalign as PosixMemalignFunction),
        "aligned_alloc": address(countingAlignedAlloc as AlignedAllocFunction),
        "memalign": address(countingMemalign as AlignedAllocFunction),
      ]
    }()

    /// `dl_iterate_phdr`'s callback and the function itself; `<link.h>` is not part of the Glibc
    /// module, so it is looked up with `dlsym`.
    typealias PhdrCallback =
      @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32
    typealias IteratePhdr = @convention(c) (PhdrCallback, UnsafeMutableRawPointer?) -> Int32

    /// Collects slots across `dl_iterate_phdr` callbacks.
    final class Collector {
      var slots: [GOTSlot] = []
    }

    static func findSlots() -> [GOTSlot] {
      guard let iterateAddress = dlsym(nil, "dl_iterate_phdr") else { return [] }
      let iterate = unsafeBitCast(iterateAddress, to: IteratePhdr.self)
      let collector = Collector()
      let context = Unmanaged.passUnretained(collector).toOpaque()
      _ = withExtendedLifetime(collector) {
        iterate(
          { info, _, context in
            guard let info, let context else { return 0 }
            let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
            GOTScanner.scan(object: info, into: collector)
            return 0
          }, context)
      }
      return makeWritable(collector.slots)
    }

    /// Reads one `struct dl_phdr_info` (address, name, program headers, their count).
    static func scan(object info: UnsafeMutableRawPointer, into collector: Collector) {
      let word = MemoryLayout<UInt>.size
      let base = info.load(as: UInt.self)
      let name = info.load(fromByteOffset: word, as: UnsafePointer<CChar>?.self).map { String(cString: $0) }
      guard let headers = info.load(fromByteOffset: 2 * word, as: UnsafePointer<Elf64_Phdr>?.self)
      else { return }
      let headerCount = Int(info.load(fromByteOffset: 3 * word, as: UInt16.self))
      // glibc and the dynamic loader call their own allocator directly; the vDSO has no GOT.
      let skipped = ["libc.so", "ld-linux", "ld64.so", "linux-vdso", "linux-gate"]
      if let name, skipped.contains(where: { name.contains($0) }) { return }
      for index in 0..<headerCount where headers[index].p_type == UInt32(PT_DYNAMIC) {
        guard let dynamic = UnsafePointer<Elf64_Dyn>(bitPattern: base &+ UInt(headers[index].p_vaddr))
        else { continue }
        scan(dynamic: dynamic, base: base, objectName: name ?? "?", into: collector)
      }
    }

    static func scan(
      dynamic: UnsafePointer<Elf64_Dyn>, base: UInt, objectName: String, into collector: Collector
    ) {
      var values: [Int64: UInt] = [:]
      var entry = dynamic
      while entry.pointee.d_tag != Int64(DT_NULL) {
        values[entry.pointee.d_tag] = UInt(entry.pointee.d_un.d_ptr)
        entry += 1
      }
      // glibc relocates these entries in place; add the base if it did not.
      func address(_ tag: Int32) -> UInt? {
        values[Int64(tag)].map { $0 < base ? base &+ $0 : $0 }
      }
      guard let symbols = address(DT_SYMTAB).flatMap({ UnsafePointer<Elf64_Sym>(bitPattern: $0) }),
        let strings = address(DT_STRTAB).flatMap({ UnsafePointer<CChar>(bitPattern: $0) })
      else { return }
      var tables: [(UInt?, UInt?)] = [(address(DT_RELA), values[Int64(DT_RELASZ)])]
      if values[Int64(DT_PLTREL)] == UInt(DT_RELA) {
        tables.append((address(DT_JMPREL), values[Int64(DT_PLTRELSZ)]))
      }
      for case (let start?, let size?) in tables {
        guard let relocations = UnsafePointer<Elf64_Rela>(bitPattern: start) else { continue }
        for index in 0..<(Int(size) / MemoryLayout<Elf64_Rela>.stride) {
          let relocation = relocations[index]
          let symbolIndex = Int(relocation.r_info >> 32)
          guard symbolIndex != 0,
            slotRelocationTypes.contains(UInt32(truncatingIfNeeded: relocation.r_info))
          else { continue }
          let symbol = String(cString: strings + Int(symbols[symbolIndex].st_name))
          guard let replacement = replacements[symbol],
            let slot = UnsafeMutablePointer<UInt>(bitPattern: base &+ UInt(relocation.r_offset))
          else { continue }
          collector.slots.append(
            GOTSlot(
              symbol: symbol, address: slot, original: slot.pointee, replacement: replacement))
        }
      }
    }

    /// Makes the slots' pages writable for good (after relocation they are read-only: RELRO);
    /// returns the slots whose page could be made writable.
    static func makeWritable(_ slots: [GOTSlot]) -> [GOTSlot] {
      let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
      return slots.filter { slot in
        let page = UInt(bitPattern: slot.address) & ~(pageSize - 1)
        return mprotect(UnsafeMutableRawPointer(bitPattern: page), Int(pageSize), PROT_READ | PROT_WRITE) == 0
      }
    }
  }
#endif
