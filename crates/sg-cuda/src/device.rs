//! [`DeviceGrid`]: a grid's values resident on the GPU, with the trie and chain tables its
//! kernels read, uploaded once.

use cuda_kernels::{DeviceBuffer, Gpu, GpuScalar};
use sg_core::{Grid, GridSpec, Real, VectorGrid};

use crate::config::SweepConfig;
use crate::error::{Error, Result};
use crate::tables::{SweepTable, TrieTable};

/// The element types with kernel instantiations: `f32` and `f64`.
pub trait DeviceReal: Real + GpuScalar {}
impl DeviceReal for f32 {}
impl DeviceReal for f64 {}

/// One dimension's sweep tables on the device.
#[derive(Debug)]
pub(crate) struct DeviceSweep {
    pub(crate) stride: u32,
    pub(crate) groups: usize,
    pub(crate) group_rows: DeviceBuffer<u32>,
    pub(crate) chain_rows: DeviceBuffer<u64>,
}

/// A sparse grid (scalar- or vector-valued) whose values live on a GPU.
///
/// Uploading builds the kernels' tables once: the trie of the blocks for evaluation
/// ([`TrieTable`]) and the chains and work groups of every dimension for hierarchization
/// ([`SweepTable`]). Values stay on the device between operations; [`download`](Self::download)
/// brings them back.
///
/// ```no_run
/// use sg_core::{Grid, GridSpec};
/// let gpu = cuda_kernels::Gpu::new(0)?;
/// let grid = Grid::<f32>::from_fn(GridSpec::regular(4, 6)?, |x| x.iter().product())?;
/// let mut dev = sg_cuda::DeviceGrid::upload(&gpu, &grid)?;
/// dev.hierarchize()?;
/// let ys = dev.evaluate(ndarray::array![[0.3f32, 0.6, 0.5, 0.5]].view())?;
/// # Ok::<(), sg_cuda::Error>(())
/// ```
#[derive(Debug)]
pub struct DeviceGrid<T: DeviceReal> {
    pub(crate) gpu: Gpu,
    pub(crate) spec: GridSpec,
    pub(crate) ncomp: usize,
    pub(crate) values: DeviceBuffer<T>,
    pub(crate) trie: TrieTable,
    pub(crate) trie_nodes: DeviceBuffer<u64>,
    pub(crate) sweeps: Vec<DeviceSweep>,
    pub(crate) sweep_config: SweepConfig,
}

impl<T: DeviceReal> DeviceGrid<T> {
    /// Uploads a scalar grid and its tables.
    ///
    /// # Errors
    /// [`Error::BlockTooLarge`], device errors ([`cuda_kernels::Error::OutOfMemory`] when the
    /// grid does not fit).
    pub fn upload(gpu: &Gpu, grid: &Grid<T>) -> Result<Self> {
        Self::from_values(gpu, grid.spec().clone(), 1, grid.values(), SweepConfig::default())
    }

    /// Uploads a grid of vectors (`s` values per point, point-major) and its tables.
    ///
    /// # Errors
    /// As [`upload`](Self::upload).
    pub fn upload_vector(gpu: &Gpu, grid: &VectorGrid<T>) -> Result<Self> {
        Self::from_values(gpu, grid.spec().clone(), grid.components(), grid.values(), SweepConfig::default())
    }

    /// Uploads `values` (`ncomp` per point, point-major) of a grid `spec` with explicit sweep
    /// parameters.
    ///
    /// # Errors
    /// [`Error::Shape`] when `values.len() != spec.len() · ncomp` or `ncomp == 0`;
    /// [`Error::Config`]; as [`upload`](Self::upload).
    pub fn from_values(
        gpu: &Gpu,
        spec: GridSpec,
        ncomp: usize,
        values: &[T],
        sweep_config: SweepConfig,
    ) -> Result<Self> {
        let _span = tracing::debug_span!("DeviceGrid::upload", len = spec.len(), ncomp).entered();
        sweep_config.validate()?;
        check_len(&spec, ncomp, values.len())?;
        let trie = TrieTable::new(&spec)?;
        let limits = crate::occupancy::SmLimits::for_device(gpu.props());
        let min_groups = crate::plan::sweep_min_groups(&limits, sweep_config.block_size);
        let tables = SweepTable::for_grid_filling(&spec, sweep_config.group_points, min_groups)?;
        let values = gpu.upload(values)?;
        let trie_nodes = gpu.upload(trie.nodes())?;
        let mut sweeps = Vec::with_capacity(tables.len());
        for t in &tables {
            // Empty tables (a dimension with no interior chain cannot occur, but keep the
            // buffers non-empty for cudarc) get a dummy word.
            let groups = if t.groups.is_empty() { vec![0u32] } else { t.groups.clone() };
            let chains = if t.chains.is_empty() { vec![0u64] } else { t.chains.clone() };
            sweeps.push(DeviceSweep {
                stride: t.stride,
                groups: t.num_groups(),
                group_rows: gpu.upload(&groups)?,
                chain_rows: gpu.upload(&chains)?,
            });
        }
        Ok(DeviceGrid { gpu: gpu.clone(), spec, ncomp, values, trie, trie_nodes, sweeps, sweep_config })
    }

    /// The grid description.
    pub fn spec(&self) -> &GridSpec {
        &self.spec
    }

    /// Values per point (1 for a scalar grid).
    pub fn components(&self) -> usize {
        self.ncomp
    }

    /// The device this grid lives on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The value buffer (`len · components` values, point-major).
    pub fn values(&self) -> &DeviceBuffer<T> {
        &self.values
    }

    /// The value buffer, mutable (for callers that write values with their own kernels).
    pub fn values_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.values
    }

    /// The evaluation trie.
    pub fn trie(&self) -> &TrieTable {
        &self.trie
    }

    /// The sweep parameters the tables were built with.
    pub fn sweep_config(&self) -> SweepConfig {
        self.sweep_config
    }

    /// Overwrites the values from the host.
    ///
    /// # Errors
    /// [`Error::Shape`] on a length mismatch; device errors.
    pub fn write_values(&mut self, values: &[T]) -> Result<()> {
        check_len(&self.spec, self.ncomp, values.len())?;
        Ok(self.gpu.write(values, &mut self.values)?)
    }

    /// The values as a host vector (waits for queued work).
    ///
    /// # Errors
    /// Device errors.
    pub fn download_values(&self) -> Result<Vec<T>> {
        Ok(self.gpu.download(&self.values)?)
    }

    /// Downloads a scalar grid.
    ///
    /// # Errors
    /// [`Error::Shape`] for a grid of vectors; device errors.
    pub fn download(&self) -> Result<Grid<T>> {
        if self.ncomp != 1 {
            return Err(Error::Shape(format!("download of a grid with {} components as scalar", self.ncomp)));
        }
        Ok(Grid::from_values(self.spec.clone(), self.download_values()?)?)
    }

    /// Downloads a grid of vectors.
    ///
    /// # Errors
    /// Device errors.
    pub fn download_vector(&self) -> Result<VectorGrid<T>> {
        Ok(VectorGrid::from_values(self.spec.clone(), self.ncomp, self.download_values()?)?)
    }
}

fn check_len(spec: &GridSpec, ncomp: usize, got: usize) -> Result<()> {
    if ncomp == 0 {
        return Err(sg_core::SgError::Zero { what: "values per point (components)" }.into());
    }
    let want = usize::try_from(spec.len()).ok().and_then(|n| n.checked_mul(ncomp));
    if want != Some(got) {
        return Err(Error::Shape(format!(
            "{got} values for a grid of {} points x {ncomp} components",
            spec.len()
        )));
    }
    Ok(())
}
