//===- CudaHalDevice.h - The cuda device ------------------------*- C++ -*-===//
//
// NVIDIA GPUs through the CUDA driver (device 0), tile kernels as cubins
// and CUDA C++ kernels through NVRTC. Internal to the runtime; made by
// hal::createDevice.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_RUNTIME_CUDA_CUDAHALDEVICE_H
#define TESSERA_RUNTIME_CUDA_CUDAHALDEVICE_H

#include "Hal/Device.h"

namespace tessera::hal {
std::unique_ptr<Device> createCudaDevice();
} // namespace tessera::hal

#endif // TESSERA_RUNTIME_CUDA_CUDAHALDEVICE_H
