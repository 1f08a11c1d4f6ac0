//! Enums that travel as names: the catalogs, scenario files, CSV columns and the Python layer spell each
//! variant the same way, and this is the one place the spelling is written.

/// Declare a fieldless enum whose variants have stable text names: `name()`, `from_name()`, `ALL` and its stub
/// annotation (a `Literal` of the names), plus (with the `python` feature) extraction from a Python string that
/// rejects an unknown name with the accepted ones, and conversion into that string.
#[macro_export]
macro_rules! named_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The variant's name as files and columns spell it.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The variant with this name, if any.
            pub fn from_name(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The accepted names, comma-separated (for error messages).
            pub fn names() -> String {
                [$($text),+].join(", ")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        #[cfg(feature = "python")]
        impl<'py> pyo3::IntoPyObject<'py> for $name {
            type Target = pyo3::types::PyString;
            type Output = pyo3::Bound<'py, pyo3::types::PyString>;
            type Error = std::convert::Infallible;

            fn into_pyobject(self, py: pyo3::Python<'py>) -> Result<Self::Output, Self::Error> {
                Ok(pyo3::types::PyString::new(py, self.name()))
            }
        }

        impl $crate::records::PyHint for $name {
            fn hint() -> String {
                let names: Vec<String> = [$($text),+].iter().map(|n| format!("{n:?}")).collect();
                format!("Literal[{}]", names.join(", "))
            }
        }

        #[cfg(feature = "python")]
        impl<'a, 'py> pyo3::FromPyObject<'a, 'py> for $name {
            type Error = pyo3::PyErr;

            fn extract(obj: pyo3::Borrowed<'a, 'py, pyo3::PyAny>) -> Result<Self, Self::Error> {
                let text: String = obj.extract()?;
                Self::from_name(&text).ok_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "{text:?} is not a {}: expected one of {}",
                        stringify!($name),
                        Self::names()
                    ))
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    named_enum! {
        /// A test enum.
        pub enum Colour { Red = "red", DarkBlue = "dark-blue" }
    }

    #[test]
    fn names_round_trip() {
        for c in Colour::ALL {
            assert_eq!(Colour::from_name(c.name()), Some(*c));
        }
        assert_eq!(Colour::DarkBlue.to_string(), "dark-blue");
        assert_eq!(Colour::from_name("blue"), None);
        assert_eq!(Colour::names(), "red, dark-blue");
        assert_eq!(<Colour as crate::records::PyHint>::hint(), r#"Literal["red", "dark-blue"]"#);
    }
}
