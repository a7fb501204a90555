//===- tessera.h - The Tessera runtime, all of it ---------------*- C++ -*-===//
//
// One include for applications: load tile-language source, compile kernels
// for a device, launch them, own device memory. Plain C++ (no LLVM, MLIR,
// CUDA or CLI11 types). One header per concept:
//   tessera/runtime/Device.h        device kinds, DeviceInfo
//   tessera/runtime/Tensor.h        TensorView, Arg
//   tessera/runtime/Program.h       Program (loaded source)
//   tessera/runtime/Kernel.h        Kernel, LaunchOptions, CompileOptions
//   tessera/runtime/SimCounters.h   what the sim device counts
//   tessera/runtime/DeviceBuffer.h  DeviceBuffer
//   tessera/runtime/Stream.h        Stream, Event
//   tessera/runtime/Runtime.h       Runtime, CudaKernelSource
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include "tessera/runtime/Device.h"
#include "tessera/runtime/DeviceBuffer.h"
#include "tessera/runtime/Kernel.h"
#include "tessera/runtime/Program.h"
#include "tessera/runtime/Runtime.h"
#include "tessera/runtime/SimCounters.h"
#include "tessera/runtime/Stream.h"
#include "tessera/runtime/Tensor.h"

#endif // TESSERA_TESSERA_H
