//! Enums that travel as names: the catalogs, scenario files, CSV columns and the Python layer spell each
//! variant the same way, and this is the one place the spelling is written.

/// Declare a fieldless enum whose variants have stable text names: `name()`, `from_name()`, `ALL`, its names and
/// doc comments (`INFO`, which the bindings export: `_core.enums()`) and its stub annotation (a `Literal` of the
/// names), plus (with the `python` feature) extraction from a Python string that rejects an unknown name with the
/// accepted ones, and conversion into that string. The enum and its variants take doc comments only.
#[macro_export]
macro_rules! named_enum {
    (
        $(#[doc = $doc:literal])*
        pub enum $name:ident { $($(#[doc = $vdoc:literal])* $variant:ident = $text:literal),+ $(,)? }
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[doc = $vdoc])* $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The enum's name, doc, and every variant's name and doc, in declaration order.
            pub const INFO: $crate::names::EnumInfo = $crate::names::EnumInfo {
                name: stringify!($name),
                doc: &[$($doc),*],
                variants: &[$(($text, &[$($vdoc),*])),+],
            };

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

/// A named enum as the bindings export it: its Rust name, doc-comment lines, and each variant's name and
/// doc-comment lines (each line with its leading space, as `records::join_doc` takes them).
#[derive(Clone, Copy, Debug)]
pub struct EnumInfo {
    pub name: &'static str,
    pub doc: &'static [&'static str],
    pub variants: &'static [(&'static str, &'static [&'static str])],
}

impl EnumInfo {
    /// The variants' names, in declaration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.variants.iter().map(|(n, _)| *n).collect()
    }
}

#[cfg(test)]
mod tests {
    named_enum! {
        /// A test enum.
        pub enum Colour {
            Red = "red",
            /// Dark
            /// blue.
            DarkBlue = "dark-blue",
        }
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
        assert_eq!((Colour::INFO.name, Colour::INFO.doc), ("Colour", &[" A test enum."][..]));
        assert_eq!(Colour::INFO.names(), ["red", "dark-blue"]);
        assert_eq!(Colour::INFO.variants[1].1, [" Dark", " blue."]);
    }
}
