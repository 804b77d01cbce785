//! The project as a whole: its files and reads on disk ([`read`]), its .NET side
//! ([`dotnet`](crate::tools::kit::dotnet)) and a new project's skeleton ([`scaffold`]).

pub(crate) mod read;
pub(crate) mod scaffold;
