use crate::error::Result;
use crate::input::Stream;
pub fn svg(_s: &[Stream], _w: u32) -> Result<String> {
    Ok(String::new())
}
