// Force-included into every C++ file of an AddressSanitizer build.
//
// LLVM's BumpPtrAllocator (llvm/Support/Allocator.h) poisons each new slab
// and unpoisons the pieces it hands out when it is compiled with ASan. Our
// sources instantiate those header templates with ASan, while the Debian
// libMLIR/libLLVM they share allocators with do not: a slab started (and
// poisoned) by our copy and filled by the library's copy is never
// unpoisoned, and reading MLIR's uniqued storage there reports a false
// use-after-poison. Compiling the allocator's poisoning out of our files
// keeps ASan's real checks (heap, stack, use-after-free of malloc'ed
// memory) and removes the false ones.
#ifndef TESSERA_ASAN_LLVM_HEADERS_H
#define TESSERA_ASAN_LLVM_HEADERS_H
#ifdef __cplusplus
#include <sanitizer/asan_interface.h>
#undef ASAN_POISON_MEMORY_REGION
#undef ASAN_UNPOISON_MEMORY_REGION
#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))
#endif
#endif
